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


#: Credentials as people write them after a password word, each followed by nothing (the
#: end of the text), by its closing quote, and by prose: whether the value stood in quotes
#: is read from the quote before it (``consistency.secrets._accepted`` looked at the value's
#: own first character, and an empty rest counted as a quote).
TOLD = ["hunter2!x", "Tr0ub4dor&3", "719962", "p@ssw0rd", "Zq8-vK2m"]
AFTER_KEYWORD = ["password: {v}", "my password is {v}", "wifi password = {v}", "密码：{v}",
                 "银行卡密码是{v}", "PIN: {v}"]
ENDINGS = ["", ".", " and that is all I remember", "，别告诉别人", " (changed in May)"]


@pytest.mark.parametrize("value", TOLD)
@pytest.mark.parametrize("form", AFTER_KEYWORD)
def test_a_credential_is_found_followed_by_nothing_by_quotes_or_by_prose(
        form: str, value: str) -> None:
    if form.startswith("PIN") and not value.isdigit():
        return  # (a PIN is digits)
    for open_, close in (("", ""), ('"', '"'), ("“", "”"), ("'", "'"), ("「", "」")):
        for ending in ENDINGS:
            text = form.format(v=f"{open_}{value}{close}") + ending
            assert find_secrets(text), text


@pytest.mark.parametrize("text", [
    "password:", "the password is", "密码：", "password: \"\"", "password: ''",
    "password: \"abc\"", "密码：“”", "password: \"", "password: “", "PIN: \"12\"",
])
def test_a_password_word_followed_by_nothing_or_empty_quotes_is_no_credential(
        text: str) -> None:
    assert not find_secrets(text), text


@pytest.mark.parametrize("text", [
    'password: "dragon"', "my password is 'qwerty'", "密码：“monkey”", 'wifi password: "abcdef"',
    'password: "我的狗叫旺财"', "密码是「我的狗叫旺财」",
])
def test_a_weak_password_in_quotes_is_a_credential(text: str) -> None:
    """In quotes after a password word, a weak word or a sentence of its own is told as the
    password: the quotes say so (they went unseen: the value's first letter was taken for
    its opening quote, and nothing was found)."""
    assert find_secrets(text), text


@pytest.mark.parametrize("text", ['PIN: "the usual"', 'PIN: "mango tree"', 'passcode: "see"',
                                  "PIN码：“问前台”"])
def test_words_in_quotes_after_a_pin_word_are_no_credential(text: str) -> None:
    """A PIN or code is digits: words in quotes after its word are not one."""
    assert not find_secrets(text), text
