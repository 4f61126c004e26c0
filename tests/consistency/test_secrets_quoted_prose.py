"""A sentence in quotes after "secret", "password" or "密码" that is prose — a tip announced
as a secret ("here is a secret: "grant agency to the people who do the work""), where a
password is or who has it ("password: "ask Maria at the front desk"",
"密码：“贴在冰箱上的那张纸上”") — is no credential; a credential in quotes after the same
words still is, a password that is a sentence of its own ("I love my dog Rex") included.
Both lists were written for this rule, in English and Chinese: the look-alikes as people
write such prose, the credentials as they write them after the same words.
"""

from __future__ import annotations

import pytest

from consistency.secrets import find_secrets

PROSE = [
    # a tip announced as a secret (the new-user trial's text first)
    'here is a secret: "grant agency to the people who do the work"',
    "Here's the secret: \"ship small changes and ship them often\"",
    'The secret: "nobody reads the manual, so put the answer in the error message"',
    'secret: "always start with the hardest task"',
    "my secret: 'write the test before the fix'",
    "Grandma's secret: 'a pinch of salt in the caramel'",
    'My secret: "I never check email before noon"',
    'secret: "do not share this with anyone"',
    'secret: "把权力交给做事的人"',
    # where the password is, who has it, that it is another one
    'the password: "same as the one for the NAS"',
    'password: "ask Maria at the front desk"',
    'password: "the one on the sticky note under the keyboard"',
    'Password: "I will tell you in person"',
    'my password is "the same as before"',
    'wifi password: "printed on the back of the router"',
    'router password: "it is on the sticker under the router"',
    'password: "same one as the office wifi"',
    'vpn password: "ask IT, they reset it every month"',
    "密码：“贴在冰箱上的那张纸上”",
    "wifi密码：“贴在冰箱上的那张纸上”",
    "密码是“问前台的小王，他知道”",
    "数据库密码：“找运维要，别写在这里”",
    "口令：“跟上次的一样”",
    "服务器密码：“问一下老张就知道了”",
    "邮箱密码是“和银行卡的不一样”",
    "密码：“存在我的笔记本里”",
    "家里wifi密码：“写在路由器背面”",
]

CREDENTIALS = [
    'here is a secret: "Zq8kLm2vP7xR"',
    'here is a secret: "Tr0ub4dor&3"',
    'my secret: "correct horse battery staple"',
    'the secret: "purple monkey dishwasher lantern"',
    'secret: "hunter2hunter2"',
    'client_secret: "Zq8kLm2vP7xR4tY8"',
    'password: "correct horse battery staple"',
    'wifi password: "correct horse battery staple"',
    'the password is "correct horse battery staple"',
    'my password is "tiger lemon piano seven"',
    'The Dropbox password is "vivid copper lantern" (with the spaces).',
    'password: "Tr0ub4dor&3"',
    # a password that is a sentence says nothing of where it is: still a password
    'password: "I love my dog Rex"',
    'password: "the quick brown fox jumps over the lazy dog"',
    "密码：“Zq8kLm2vP7”",
    "密码是“woaini1314”",
    "密码：“Zq8kLm2vP7”，别外传",
    "口令：“X7#kq9Lm”",
    "wifi密码：“Gx7pR2qLm9”",
    "我的秘密：密码是“Qw3rty!Zx9”",
    "密码：“我爱北京天安门广场”",
]


@pytest.mark.parametrize("text", PROSE)
def test_prose_in_quotes_after_a_secret_word_is_no_credential(text: str) -> None:
    assert find_secrets(text) == [], text


@pytest.mark.parametrize("text", CREDENTIALS)
def test_a_credential_in_quotes_after_the_same_words_is_found(text: str) -> None:
    found = find_secrets(text)
    assert found and found[0].kind == "password", text
