"""The words memories use, folded to one spelling per concept, in English and Chinese.

Pure data and two lookups; no model. :mod:`consistency.claims` reads a memory's words
through it, so that the pair judgement compares *what* is said, not how: "kids" and
"children", "concise replies" and "short answers", "Vegetarian" and "用户吃素", "Lives in
Hangzhou" and "住在杭州" meet on one token each.

Each concept has a canonical English token (a light stem, see :func:`consistency.claims.stem`)
and its spellings: English words and phrases (any inflection the light stem folds), and
Chinese words, matched longest first inside a run of Han characters. A spelling that carries
a negation ("teetotal" = "not drink alcohol") is written out with it, so polarity still reads.

Source: written by hand for the vocabulary of assistant memories — how a user wants to be
answered, diet and health, family, home and work, tools, code style, schedules — the
categories of the labelled pairs in ``bench/write_pairs/`` (words added where a pair set
showed them missing, each addition measured on every set in one run). Only words with one
clear sense in a memory are folded: a word with two senses ("call", "books", "responses",
"run a test" / "go for a run") keeps its own spelling, and a one-character Chinese word
yields to the longer words that contain it (茶 / 奶茶), so two facts never meet on a guess.
Products and services known by a Chinese name (微信 / WeChat, 飞书 / Feishu, 安卓 / Android)
fold to their English name. Place names: the Chinese names of the cities and districts
:mod:`consistency.claims` reads as places, with their English (pinyin or customary) spelling.
Its reach is the vocabulary it was written for: a pair set written later in other words
gained nothing from it.
"""

from __future__ import annotations

import re

__all__ = ["CONCEPTS", "EN_PHRASES", "EN_WORDS", "PEOPLE", "PLACES_EN", "ZH_WORDS"]

# canonical | English spellings (words or phrases) | Chinese spellings
_TABLE = """
now | now currently presently nowadays | 现在 目前 如今 眼下 当前
recent | recently lately | 最近 近来
before | before earlier-than prior-to |
after | after later-than |
reply | reply replies replied answer answers answered |
reply |  | 回复 回答 答复 回应 作答
short | short shorter concise brief briefly terse succinct compact | 简短 简洁 简明
short |  | 精简 简练 简单明了
long | lengthy verbose wordy long-winded | 冗长 啰嗦 长篇大论
detailed | detailed thorough in-depth | 详细 详尽
private | private | 私有
extrovert | extrovert extroverted extravert outgoing | 外向
introvert | introvert introverted | 内向
opensource | open-source open-sourced | 开源
list | list lists bullet bullets bullet-point bullet-points | 列表 清单 要点 分点
table | table tables | 表格
emoji | emoji emojis emoticon emoticons | 表情符号 表情包 表情 颜文字
chinese | chinese mandarin | 中文 汉语 普通话 华语
china | china | 中国
english | english | 英文 英语
japanese | japanese | 日语 日文
korean | korean | 韩语 韩文
french | french | 法语 法文
german | german | 德语 德文
spanish | spanish | 西班牙语
british | british britain | 英国 英式
atmost | at-most | 最多 不超过 至多 不多于
atleast | at-least | 至少 不少于 不低于 起码
setto |  | 设为 设成 设置为 设置成 设定为 设定成 配置为 配置成
american | american america usa | 美国 美式
comment | comment comments commented | 注释 评论
code | code | 代码
example | example examples | 例子 示例 实例 举例
conclusion | conclusion conclusions bottom-line tl;dr tldr | 结论
explanation | explanation explanations reasoning rationale explain explains explained | 解释 说明
explanation |  | 理由 讲解
formal | formal | 正式 书面
casual | casual informal | 随意 口语化 口语
translate | translate translation translated | 翻译
vegetarian | vegetarian vegetarians | 吃素 素食者 素食主义者 素食
vegan | vegan vegans plant-based | 纯素 严格素食
allergic | allergic allergy allergies | 过敏
peanut | peanut peanuts | 花生
shellfish | shellfish | 贝类 贝壳类 甲壳类
seafood | seafood | 海鲜
dairy | dairy | 乳制品 奶制品
milk | milk | 牛奶
lactose | lactose | 乳糖
gluten | gluten | 麸质 面筋
egg | egg eggs | 鸡蛋 蛋
beef | beef | 牛肉
pork | pork | 猪肉
chicken | chicken | 鸡肉
fish | fish | 鱼
meat | meat | 肉
coffee | coffee | 咖啡
tea | tea | 茶
alcohol | alcohol booze liquor | 酒精 酒
spicy | spicy | 辣
cilantro | cilantro coriander | 香菜
sugar | sugar | 糖
diabetes | diabetes diabetic | 糖尿病
glucose | glucose blood-sugar | 血糖
eat | eat eats ate eaten eating | 吃
drink | drink drinks drank drinking | 喝
smoke | smoke smokes smoked smoking | 抽烟 吸烟
sleep | sleep sleeps slept sleeping asleep | 睡觉 睡眠 入睡
wake | wake wakes woke get-up gets-up | 起床
run | jog jogs jogging jogged running | 跑步
exercise | exercise exercises workout workouts | 锻炼 运动
gym | gym | 健身房
swim | swim swims swimming | 游泳
lefthanded | left-handed lefty southpaw | 左撇子 用左手
child | kid kids child children | 孩子 小孩 子女 儿女 娃娃 娃
daughter | daughter daughters | 女儿
son | son sons | 儿子
wife | wife | 妻子 老婆 太太 爱人
husband | husband | 丈夫 老公
brother | brother brothers | 兄弟 哥哥 弟弟
sister | sister sisters | 姐妹 姐姐 妹妹
mother | mother mom mum | 妈妈 母亲 老妈 我妈
father | father dad | 爸爸 父亲 老爸 我爸
parent | parent parents | 父母 爸妈
fatherinlaw | father-in-law | 岳父 公公
motherinlaw | mother-in-law | 岳母 婆婆
brotherinlaw | brother-in-law | 姐夫 妹夫 小舅子
sisterinlaw | sister-in-law | 嫂子 弟媳 小姨子
soninlaw | son-in-law | 女婿
daughterinlaw | daughter-in-law | 儿媳
dog | dog dogs | 狗
cat | cat cats | 猫
rabbit | rabbit rabbits bunny bunnies | 兔子
hamster | hamster hamsters | 仓鼠
parrot | parrot parrots | 鹦鹉
turtle | turtle turtles tortoise tortoises | 乌龟
pet | pet pets | 宠物
friend | friend friends | 朋友
boyfriend | boyfriend | 男朋友 男友
girlfriend | girlfriend | 女朋友 女友
classmate | classmate classmates | 同学
neighbour | neighbour neighbor neighbours neighbors | 邻居
roommate | roommate roommates flatmate | 室友
godmother | godmother | 干妈
manager | manager boss supervisor | 经理 老板 上司 领导
colleague | colleague colleagues coworker coworkers co-worker co-workers | 同事
team | team | 团队 小组
birthday | birthday | 生日
live | live lives lived living reside resides | 住在 居住
work |  | 工作
move | move moves moved relocate relocated | 搬到 搬家
home | home | 家里 在家 回家
office | office | 办公室
company | company employer | 公司
remote | remote remotely | 远程
city | city | 城市
test | test tests tested testing | 测试
unittest | unit-test unit-tests | 单元测试
commit | commit commits committed | 提交
push | push pushes pushed pushing | 推送
branch | branch branches | 分支
main |  | 主分支 主干
merge | merge merges merged | 合并
review | review reviews reviewed | 审查 评审 审核
deploy | deploy deploys deployed deployment deployments | 部署 上线
release | release releases released | 发布 发版
database | database databases | 数据库
server | server servers | 服务器
memory | memory ram | 内存
disk | disk disks | 硬盘 磁盘
production | production prod | 生产环境 生产 线上环境
environment | environment environments env | 环境
staging | staging | 预发环境 预发布 预发
log | log logs logging | 日志
backup | backup backups back-up | 备份
password | password passwords | 密码
meeting | meeting meetings | 会议 开会
standup | standup standups stand-up stand-ups | 站会 晨会
deadline | deadline deadlines due-date | 截止日期 截止时间 截止
morning | morning mornings | 早上 上午 清晨 早晨
evening | evening evenings | 傍晚
night | night nights | 夜里 夜间 晚上
noon | noon midday | 中午
afternoon | afternoon afternoons | 下午
usually | usually generally typically normally | 一般 通常 平时 平常
use | use uses used using utilise utilize employ | 使用 用
editor | editor editors | 编辑器
dark | dark | 深色 暗色 暗黑
light | light | 浅色 亮色
red | red | 红色
blue | blue | 蓝色
green | green | 绿色
yellow | yellow | 黄色
black | black | 黑色
white | white | 白色
grey | grey gray | 灰色
purple | purple | 紫色
pink | pink | 粉色 粉红色
brown | brown | 棕色 咖啡色
theme | mode modes | 模式
theme | theme themes color-scheme colour-scheme | 主题 配色
font | font fonts | 字体
indentation | indentation indent indents | 缩进
add | add adds added adding | 添加 加
directly | directly direct | 直接
space | space spaces | 空格
doc | doc docs documentation document documents | 文档
note | note notes | 笔记
learn | learn learns learned learnt learning study studies studying | 学习 在学 学
travel | travel travels travelled traveled traveling travelling trip | 旅行 旅游 出差
flight | flight flights | 航班
hotel | hotel hotels | 酒店
budget | budget budgets | 预算
salary | salary | 工资 薪水 薪资
rent | rent | 房租 租金
music | music | 音乐
movie | movie movies film films | 电影
game | game games | 游戏
user | user | 用户
milktea | milk-tea bubble-tea | 奶茶
hotdog | hot-dog hot-dogs | 热狗
cold | cold colder | 冷
warm | warm warmer | 暖和 温暖 暖
hot | hot hotter |
panda | panda pandas | 熊猫
squid | squid | 鱿鱼
whale | whale whales | 鲸鱼
cake | cake cakes | 蛋糕
protein | protein | 蛋白粉 蛋白质 蛋白
bar | bar bars pub | 酒吧
overtime | overtime | 加班
canada | canada | 加拿大
attend | attend attends attended | 参加
increase | increase increases increased | 增加
spare | spare standby | 备用
effect | effect effects | 作用
credit | credit | 信用
math | math maths mathematics | 数学
science | science | 科学
train | train trains | 火车
station | station | 车站
parking | parking | 停车
pharmacy | pharmacy | 药店
bread | bread | 面包
wallet | wallet | 钱包
backpack | backpack | 背包
muscle | muscle muscles | 肌肉
summary | summary summaries summarize summarizes summarise summarises recap | 总结 摘要 小结
name | named nicknamed | 名叫 名字叫 叫做
afraid | afraid scared fearful anxious | 害怕 恐惧 怕
married | married wed | 结婚 已婚
about | around roughly approximately circa | 大约 大概
manager | reports-to report-to reporting-to | 汇报给
hike | hike hikes hiked hiking | 爬山 登山 徒步
cello | cello | 大提琴
violin | violin | 小提琴
piano | piano | 钢琴
guitar | guitar | 吉他
orchestra | orchestra | 管弦乐团 乐团
band | band | 乐队
choir | choir | 合唱团
horror | horror | 恐怖
semver | semver semantic-versioning | 语义化版本号 语义化版本
version | version versions | 版本号 版本
write | write writes wrote written writing | 编写 撰写 写
message | message messages | 消息 信息
journal | journal journals journaled diary | 日记
cluster | cluster clusters | 集群
node | node nodes | 节点
container | container containers | 容器
image | image images | 镜像 图片
upgrade | upgrade upgrades upgraded | 升级
downgrade | downgrade downgrades downgraded | 降级
rollback | rollback rollbacks roll-back | 回滚
migrate | migrate migrates migrated migration | 迁移
dependency | dependency dependencies | 依赖
package | package packages | 包
framework | framework frameworks | 框架
frontend | frontend front-end | 前端
backend | backend back-end | 后端
address | address | 地址
link | link links url urls | 链接 网址
payment | payment payments | 支付 付款
api | api apis | 接口
file | file files | 文件
folder | folder folders directory directories | 目录 文件夹
configuration | configuration settings | 配置
domain | domain domains | 域名
certificate | certificate certificates cert certs | 证书
monitoring | monitoring | 监控
alert | alert alerts alerting | 告警 报警
error | error errors | 错误 报错
cache | cache caches caching | 缓存
queue | queue queues | 队列
project | project projects | 项目
task | task tasks todo todos | 任务 待办
report | report reports | 报告
customer | customer customers | 客户
account | account accounts | 账号 账户
email | email emails e-mail | 邮件 邮箱
phone | phone phones | 手机 电话
notification | notification notifications | 通知
reminder | reminder reminders | 提醒
calendar | calendar calendars | 日历
doctor | doctor doctors | 医生
dentist | dentist | 牙医
hospital | hospital | 医院
medication | medication medications medicine | 药物 药
retire | retired retire retires retiring decommission decommissions decommissioned |
retire | sunset sunsetted shut-down |
retire |  | 退休 停用 下线 停运
engineer | engineer engineers | 工程师
teacher | teacher teachers | 老师 教师
student | student students | 学生
university | university college | 大学
school | school | 学校
hometown | hometown | 老家 家乡
born | born | 出生
car | car cars | 汽车 车
bike | bike bikes bicycle cycling | 自行车 骑车
drive | drive drives drove driving | 开车
house | house | 房子
apartment | apartment | 公寓
buy | buy buys bought | 买
money | money | 钱
savings | savings | 存款
invest | invest invests invested investing investment | 投资
stock | stock stocks | 股票
insurance | insurance | 保险
tax | tax taxes | 税
bank | bank | 银行
creditcard | credit-card credit-cards | 信用卡
app | app apps application applications | 应用 应用程序
useful | useful | 有用
cost | cost costs spend spending expense expenses | 费用 成本 开销 花费
destroy | destroy destroys destroyed tear-down torn-down teardown | 销毁
old | old older legacy | 旧版 老的 旧的 旧
digest | digest tolerate tolerates | 消化
wechat | wechat weixin | 微信
wechatpay | wechat-pay | 微信支付
wecom | wecom | 企业微信
alipay | alipay | 支付宝
feishu | feishu lark | 飞书
dingtalk | dingtalk | 钉钉
taobao | taobao | 淘宝
evernote | evernote | 印象笔记
duolingo | duolingo | 多邻国
neteasemusic | netease-music netease-cloud-music | 网易云音乐
xiaohongshu | xiaohongshu rednote | 小红书
weibo | weibo | 微博
zhihu | zhihu | 知乎
baidu | baidu | 百度
android | android | 安卓
when |  | 的时候 时候
please |  | 尽量 麻烦
tencent | tencent | 腾讯
bytedance | bytedance | 字节跳动
alibaba | alibaba | 阿里巴巴
nurse | nurse nurses | 护士
chef | chef chefs | 厨师
glasses | glasses eyeglasses spectacles | 眼镜
nearsighted | nearsighted near-sighted shortsighted short-sighted myopic | 近视
invoice | invoice invoices | 发票
exam | exam exams examination | 考试
recipe | recipe recipes | 菜谱 食谱
poem | poem poems poetry | 诗歌 诗
creative | creative | 创意
exclamation | exclamation-mark exclamation-marks exclamation-point exclamation-points | 感叹号
regex | regex regexes regexp regular-expression regular-expressions | 正则表达式 正则
passive | passive-voice | 被动语态
subway | subway metro underground | 地铁
repeat | repeat repeats repeated repeating restate restates restated restating | 重复 复述
cook | cook cooks cooked cooking | 做饭 下厨 烹饪 煮饭
tone | tone | 语气 口吻
jargon | jargon | 术语 行话
hardcode | hardcode hardcodes hardcoded hard-code hard-codes hard-coded | 硬编码 写死
approve | approve approves approved approval approvals sign-off | 审批 批准
holiday | holiday holidays | 节假日 假日 假期
nightowl | night-owl night-owls | 夜猫子
downpayment | down-payment | 首付
abbreviation | abbreviation abbreviations abbreviate abbreviated | 缩写 简写
variable | variable variables | 变量
guess | guess guesses guessed guessing | 瞎猜 猜测
unit | units | 单位
"""

# spellings that carry a negation, written out with it
_NEGATED = {"quit": "not", "quits": "not", "gave up": "not", "given up": "not",
            "戒了": "not", "戒掉": "not", "teetotal": "not drink alcohol",
            "teetotaler": "not drink alcohol",
            "teetotaller": "not drink alcohol", "nondrinker": "not drink alcohol",
            "non-drinker": "not drink alcohol", "戒酒": "not drink alcohol",
            "lactose intolerant": "not digest lactose", "lactose intolerance": "not digest lactose",
            "乳糖不耐受": "not digest lactose", "乳糖不耐": "not digest lactose",
            "夜间模式": "dark mode"}

# Chinese words that only mark aspect or politeness ("正在学", "已经搬到", "请用"): no content
_FILLERS = ("正在", "已经", "请", "任何", "一些", "适当", "恐怕")

# abbreviations and spelling variants, folded as they are written
_ABBREVIATIONS = {
    "js": "javascript", "ts": "typescript", "py": "python", "db": "database", "dbs": "database",
    "k8s": "kubernetes", "repo": "repository", "repos": "repository", "config": "configuration",
    "cfg": "configuration", "pr": "pull request", "prs": "pull request", "mins": "minute",
    "secs": "second", "colour": "color", "favourite": "favorite"}

#: Chinese city and district names read as places, with their English spelling.
PLACES_EN: dict[str, str] = {
    "北京": "beijing", "上海": "shanghai", "广州": "guangzhou", "深圳": "shenzhen",
    "杭州": "hangzhou", "南京": "nanjing", "苏州": "suzhou", "成都": "chengdu",
    "重庆": "chongqing", "武汉": "wuhan", "西安": "xian", "天津": "tianjin", "长沙": "changsha",
    "郑州": "zhengzhou", "青岛": "qingdao", "厦门": "xiamen", "宁波": "ningbo", "合肥": "hefei",
    "福州": "fuzhou", "济南": "jinan", "大连": "dalian", "沈阳": "shenyang", "哈尔滨": "harbin",
    "长春": "changchun", "昆明": "kunming", "贵阳": "guiyang", "南宁": "nanning",
    "海口": "haikou", "三亚": "sanya", "兰州": "lanzhou", "乌鲁木齐": "urumqi", "拉萨": "lhasa",
    "呼和浩特": "hohhot", "太原": "taiyuan", "石家庄": "shijiazhuang", "南昌": "nanchang",
    "无锡": "wuxi", "东莞": "dongguan", "佛山": "foshan", "珠海": "zhuhai",
    "香港": "hong kong", "澳门": "macau", "台北": "taipei", "新加坡": "singapore",
    "东京": "tokyo", "首尔": "seoul", "纽约": "new york", "伦敦": "london", "巴黎": "paris",
    "柏林": "berlin", "旧金山": "san francisco", "洛杉矶": "los angeles", "西雅图": "seattle",
    "悉尼": "sydney", "温哥华": "vancouver", "多伦多": "toronto", "海淀": "haidian",
    "朝阳": "chaoyang", "浦东": "pudong", "徐汇": "xuhui", "静安": "jingan", "黄浦": "huangpu",
    "南山": "nanshan", "福田": "futian", "西湖": "xihu", "余杭": "yuhang", "滨江": "binjiang",
    "天河": "tianhe", "慕尼黑": "munich", "里斯本": "lisbon", "阿姆斯特丹": "amsterdam",
    "马德里": "madrid", "罗马": "rome", "米兰": "milan", "维也纳": "vienna", "苏黎世": "zurich",
    "都柏林": "dublin", "波士顿": "boston", "芝加哥": "chicago", "大阪": "osaka",
    "京都": "kyoto", "曼谷": "bangkok", "墨尔本": "melbourne", "蒙特利尔": "montreal",
}  # fmt: skip


def _parse() -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
    words: dict[str, str] = {}
    phrases: dict[str, str] = {}
    zh: dict[str, str] = {}
    for line in _TABLE.strip().splitlines():
        canonical, english, chinese = (part.strip() for part in line.split("|"))
        # a concept may take several lines: its spellings add up
        for spelling in english.split():
            if "-" in spelling or ";" in spelling:
                phrases[spelling.replace("-", " ")] = canonical
                phrases[spelling] = canonical
            else:
                words[spelling] = canonical
        for spelling in chinese.split():
            zh[spelling] = canonical
    for spelling, meaning in _ABBREVIATIONS.items():
        words.setdefault(spelling, meaning)
    for spelling in _FILLERS:
        zh[spelling] = ""
    for spelling, meaning in _NEGATED.items():
        if re.search(r"[\u4e00-\u9fff]", spelling):
            zh[spelling] = meaning
        else:
            phrases[spelling] = meaning
    return words, phrases, zh


#: English word → canonical token(s) (``"kids"`` → ``"child"``).
EN_WORDS: dict[str, str]
#: English phrase (spaces or hyphens) → canonical token (``"bullet points"`` → ``"list"``).
EN_PHRASES: dict[str, str]
#: Chinese word → canonical token(s) (``"吃素"`` → ``"vegetarian"``).
ZH_WORDS: dict[str, str]
EN_WORDS, EN_PHRASES, ZH_WORDS = _parse()
#: Canonical tokens that name a person other than the user: a fact about one of them is not
#: a fact about the user ("Vegetarian" / "妻子吃素").
PEOPLE: frozenset[str] = frozenset({
    "child", "daughter", "son", "wife", "husband", "mother", "father", "parent", "friend",
    "brother", "sister",
    "boyfriend", "girlfriend", "classmate", "neighbour", "roommate", "godmother", "manager",
    "colleague", "team", "fatherinlaw", "motherinlaw", "brotherinlaw", "sisterinlaw", "soninlaw",
    "daughterinlaw", "doctor", "dentist", "teacher", "student", "customer"})
#: Every canonical token: a thing the lexicon knows by name.
CONCEPTS: frozenset[str] = frozenset(
    word for table in (EN_WORDS, EN_PHRASES, ZH_WORDS) for meaning in table.values()
    for word in meaning.split() if word != "not")
