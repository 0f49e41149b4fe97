"""The live bench's task set (bench/live.py): small tasks of the kinds coding agents get.

Each task is what a user would hand an agent: a few files in a fresh ``git init`` workspace,
the prompt as typed, and how to tell it was done — a shell ``check`` that must exit 0 in the
workspace afterwards (``python`` is the bench's venv, which has pytest), regexes the final
answer must all match (question tasks; case-insensitive), and files that must come out
byte-identical (the tests beside code to fix, so "edit the test instead" fails the task).

The answers are not guessable: a port, a checksum, a computed number only the code gives.
Code under test sits in subpackages with its tests beside it, not at the root.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["HELD_OUT", "TASKS", "Task", "by_names"]


@dataclass(frozen=True, slots=True)
class Task:
    name: str
    kind: str
    prompt: str
    files: dict[str, str] = field(default_factory=dict)
    check: str | None = None
    """A shell command run in the workspace after the agent; it must exit 0."""
    answer: tuple[str, ...] = ()
    """Regexes the final answer must all match (case-insensitive)."""
    unchanged: tuple[str, ...] = ()
    """Files of ``files`` that must be byte-identical afterwards."""


_PRICING = '''\
def discount(price, percent):
    """The price after taking ``percent`` per cent off."""
    return price * percent / 100
'''
_PRICING_TEST = '''\
from shop.pricing import discount


def test_ten_percent_off():
    assert discount(200, 10) == 180


def test_nothing_off():
    assert discount(50, 0) == 50
'''
_SLUG = '''\
import re


def slugify(title):
    """A URL slug: lower case words joined by single hyphens."""
    words = re.findall(r"[A-Za-z0-9]+", title)
    return "-".join(words)
'''
_SLUG_TEST = '''\
from textkit.slug import slugify


def test_lower_case():
    assert slugify("Hello World") == "hello-world"


def test_punctuation():
    assert slugify("Ready, set... go!") == "ready-set-go"
'''
_WINDOW = '''\
def windows(seq, n):
    """Every run of ``n`` consecutive items of ``seq``, in order."""
    return [seq[i:i + n] for i in range(len(seq) - n)]
'''
_WINDOW_TEST = '''\
from ranges.window import windows


def test_pairs():
    assert windows([1, 2, 3], 2) == [[1, 2], [2, 3]]


def test_whole():
    assert windows("abc", 3) == ["abc"]
'''
_STORE = '''\
class Store:
    """Items kept in memory, in the order they were added."""

    def __init__(self):
        self._items = []

    def add(self, item):
        self._items.append(item)

    def items(self):
        return list(self._items)
'''
_STORE_TEST = '''\
from inventory.store import Store


def test_add_keeps_order():
    store = Store()
    store.add("a")
    store.add("b")
    assert store.items() == ["a", "b"]
'''
_RESTOCK = '''\
def restock(level, amount):
    """The stock level after a delivery of ``amount`` (never below zero)."""
    return level + amount


def sell(level, amount):
    if amount > level:
        raise ValueError("not enough stock")
    return level - amount
'''
_RESTOCK_TEST = '''\
import pytest

from warehouse.stock import restock, sell


def test_restock_adds():
    assert restock(3, 4) == 7


def test_restock_negative_delivery_clamps():
    assert restock(2, -5) == 0


def test_sell_too_much():
    with pytest.raises(ValueError):
        sell(1, 2)
'''
_INVOICE = '''\
def calc_total(lines):
    """The sum of quantity * unit price over the invoice lines."""
    return sum(qty * price for qty, price in lines)
'''
_REPORT = '''\
from billing.invoice import calc_total


def summary(lines):
    return f"{len(lines)} lines, total {calc_total(lines)}"
'''
_GREET = '''\
import argparse


def main(argv=None):
    parser = argparse.ArgumentParser(description="Greet someone.")
    parser.add_argument("name")
    args = parser.parse_args(argv)
    print(f"Hello, {args.name}!")


if __name__ == "__main__":
    main()
'''
_PARSER = '''\
def parse_pair(text):
    """'key=value' -> ('key', 'value')."""
    key, _, value = text.partition("=")
    return key.strip(), value.strip()


def old_parse(text):
    # the pre-1.0 format, no longer read anywhere
    return text.split(":")


def parse_lines(text):
    return [parse_pair(line) for line in text.splitlines() if line.strip()]
'''
_PARSER_TEST = '''\
from confparse.core import parse_lines, parse_pair


def test_pair():
    assert parse_pair(" a = 1 ") == ("a", "1")


def test_lines():
    assert parse_lines("a=1\\n\\nb=2\\n") == [("a", "1"), ("b", "2")]
'''
_HELPERS = '''\
def strip_all(items):
    return [i.strip() for i in items]


def first(items):
    return items[0] if items else None


def last(items):
    return items[-1] if items else None


def chunks(items, n):
    return [items[i:i + n] for i in range(0, len(items), n)]


def flatten(nested):
    return [x for part in nested for x in part]


def unique(items):
    return list(dict.fromkeys(items))


def count_if(items, predicate):
    return sum(1 for i in items if predicate(i))
'''
_CHECKSUM = '''\
import hashlib
import sys


def main(path):
    with open(path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    print(f"checksum: {digest[:10]}")


if __name__ == "__main__":
    main(sys.argv[1])
'''

TASKS: tuple[Task, ...] = (
    Task("hello-script", "create a script",
         "Create a Python script hello.py that prints exactly: Hello, world!",
         check='test "$(python hello.py)" = "Hello, world!"'),
    Task("fizzbuzz-script", "create a script",
         "Write fizzbuzz.py: it prints the numbers 1 to 15, one per line, but Fizz for multiples of 3, "
         "Buzz for multiples of 5 and FizzBuzz for multiples of both.",
         check="python -c \"import subprocess,sys; out=subprocess.run([sys.executable,'fizzbuzz.py'],"
               "capture_output=True,text=True).stdout.split(); "
               "want=['FizzBuzz' if i%15==0 else 'Fizz' if i%3==0 else 'Buzz' if i%5==0 else str(i) "
               "for i in range(1,16)]; sys.exit(out!=want)\""),
    Task("fix-discount", "fix a failing test",
         "python -m pytest -q shop fails. Fix it.",
         {"shop/__init__.py": "", "shop/pricing.py": _PRICING, "shop/tests/__init__.py": "",
          "shop/tests/test_pricing.py": _PRICING_TEST},
         check="python -m pytest -q shop", unchanged=("shop/tests/test_pricing.py",)),
    Task("fix-slugify", "fix a bug a test shows",
         "slugify('Hello World') should return 'hello-world', and textkit/test_slug.py says it does not. "
         "Fix the bug.",
         {"textkit/__init__.py": "", "textkit/slug.py": _SLUG, "textkit/test_slug.py": _SLUG_TEST},
         check="python -m pytest -q textkit", unchanged=("textkit/test_slug.py",)),
    Task("fix-windows", "fix a bug a test shows",
         "The tests in ranges/tests fail: windows() loses its last window. Fix windows() in ranges/window.py.",
         {"ranges/__init__.py": "", "ranges/window.py": _WINDOW, "ranges/tests/__init__.py": "",
          "ranges/tests/test_window.py": _WINDOW_TEST},
         check="python -m pytest -q ranges", unchanged=("ranges/tests/test_window.py",)),
    Task("fix-restock", "fix a failing test",
         "One test in warehouse/ fails. Find out which and fix the code so it passes.",
         {"warehouse/__init__.py": "", "warehouse/stock.py": _RESTOCK, "warehouse/test_stock.py": _RESTOCK_TEST},
         check="python -m pytest -q warehouse", unchanged=("warehouse/test_stock.py",)),
    Task("add-is-prime", "add a function",
         "Add a function is_prime(n) to mathutils/numbers.py that returns True when n is a prime number "
         "and False otherwise (0 and 1 are not prime).",
         {"mathutils/__init__.py": "", "mathutils/numbers.py": "def square(n):\n    return n * n\n"},
         check="python -c \"from mathutils.numbers import is_prime, square; "
               "assert [n for n in range(30) if is_prime(n)] == [2,3,5,7,11,13,17,19,23,29]; assert square(3) == 9\""),
    Task("add-store-count", "add a function with a test",
         "Add a count() method to Store in inventory/store.py that returns how many items were added, "
         "and a test for it in inventory/test_store.py. Run the tests.",
         {"inventory/__init__.py": "", "inventory/store.py": _STORE, "inventory/test_store.py": _STORE_TEST},
         check="python -c \"from inventory.store import Store; s=Store(); assert s.count()==0; s.add(1); s.add(2); "
               "assert s.count()==2\" && grep -q 'count()' inventory/test_store.py && python -m pytest -q inventory"),
    Task("add-tests", "write tests",
         "Write pytest tests for reverse_words in text/words.py, in a new file text/test_words.py.",
         {"text/__init__.py": "",
          "text/words.py": 'def reverse_words(sentence):\n    """"a b c" -> "c b a"."""\n'
                           '    return " ".join(reversed(sentence.split()))\n'},
         check="grep -q reverse_words text/test_words.py && python -m pytest -q text/test_words.py",
         unchanged=("text/words.py",)),
    Task("which-port", "answer from the code",
         "Which port does the server in this project listen on?",
         {"server/__init__.py": "", "server/settings.py": 'HOST = "0.0.0.0"\nPORT = 8731\n',
          "server/app.py": "from server.settings import HOST, PORT\n\n\ndef address():\n    return HOST, PORT\n"},
         answer=(r"\b8731\b",)),
    Task("what-returns", "answer from the code",
         "What does compute() in calc/core.py return? Give the number.",
         {"calc/__init__.py": "",
          "calc/core.py": "def compute():\n    total = 0\n    for i in range(1, 12):\n        if i % 3:\n"
                          "            total += i * 7\n    return total - 5\n"},
         answer=(r"\b331\b",)),
    Task("count-functions", "answer from the code",
         "How many functions are defined in lib/helpers.py?",
         {"lib/__init__.py": "", "lib/helpers.py": _HELPERS},
         answer=(r"\b(7|seven)\b",)),
    Task("who-calls", "answer from the code",
         "Which function in the app package calls send_email?",
         {"app/__init__.py": "", "app/mail.py": "def send_email(to, body):\n    print('mail to', to)\n",
          "app/billing.py": "from app.mail import send_email\n\n\ndef charge(account):\n    return account\n\n\n"
                            "def remind_overdue(account):\n    send_email(account, 'Your invoice is overdue')\n",
          "app/users.py": "def rename(user, name):\n    user['name'] = name\n"},
         answer=(r"remind_overdue",)),
    Task("run-count", "run a script and report",
         "Run count.py and tell me the number it prints.",
         {"count.py": "total = sum(i * i for i in range(20)) + 17\nprint(total)\n"},
         answer=(r"\b2487\b",)),
    Task("run-checksum", "run a script and report",
         "Run python tools/checksum.py data.txt and tell me the checksum it prints.",
         {"tools/checksum.py": _CHECKSUM, "data.txt": "minicode live bench\n" * 3},
         answer=(r"\b1422b8621c\b",)),
    Task("failing-test-name", "run and report",
         "Run the tests in warehouse/ and tell me the name of the test that fails. Do not change anything.",
         {"warehouse/__init__.py": "", "warehouse/stock.py": _RESTOCK, "warehouse/test_stock.py": _RESTOCK_TEST},
         answer=(r"test_restock_negative_delivery_clamps",),
         unchanged=("warehouse/stock.py", "warehouse/test_stock.py")),
    Task("edit-json", "edit a JSON file",
         "Set the version in package.json to 1.3.0.",
         {"package.json": '{\n  "name": "widget",\n  "version": "1.2.7",\n  "private": true,\n'
                          '  "scripts": {"test": "node test.js"}\n}\n'},
         check="python -c \"import json; d=json.load(open('package.json')); assert d=={'name':'widget',"
               "'version':'1.3.0','private':True,'scripts':{'test':'node test.js'}}, d\""),
    Task("edit-toml", "edit a TOML file",
         "Add requests to the dependencies in pyproject.toml.",
         {"pyproject.toml": '[project]\nname = "fetcher"\nversion = "0.1.0"\ndependencies = ["click>=8"]\n'},
         check="python -c \"import tomllib; d=tomllib.load(open('pyproject.toml','rb'))['project']; "
               "deps=[x.split('>')[0].split('=')[0].strip() for x in d['dependencies']]; "
               "assert sorted(deps)==['click','requests'], deps; assert d['name']=='fetcher'\""),
    Task("edit-yaml", "edit a YAML file",
         "In .github/workflows/ci.yml, change the Python version from 3.10 to 3.12.",
         {".github/workflows/ci.yml": "name: ci\non: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n"
                                      "    steps:\n      - uses: actions/checkout@v4\n"
                                      "      - uses: actions/setup-python@v5\n        with:\n"
                                      "          python-version: \"3.10\"\n      - run: pip install -e .\n"
                                      "      - run: pytest\n"},
         check="grep -Eq 'python-version: \"?3\\.12\"?' .github/workflows/ci.yml && ! grep -q '3\\.10' "
               ".github/workflows/ci.yml && grep -q 'run: pytest' .github/workflows/ci.yml"),
    Task("rename-total", "rename across files",
         "Rename the function calc_total to compute_total everywhere in the billing package.",
         {"billing/__init__.py": "", "billing/invoice.py": _INVOICE, "billing/report.py": _REPORT},
         check="! grep -rq calc_total billing && python -c \"from billing.report import summary; "
               "from billing.invoice import compute_total; assert summary([(2, 3), (1, 4)]) == '2 lines, total 10'\""),
    Task("cli-flag", "add a CLI flag",
         "Add a --shout flag to greet.py that prints the greeting in upper case.",
         {"greet.py": _GREET},
         check='test "$(python greet.py Ann)" = "Hello, Ann!" && test "$(python greet.py Ann --shout)" = "HELLO, ANN!"'),
    Task("readme-usage", "write docs",
         "Add a Usage section to README.md that shows how to run the word counter: python -m wordcount FILE.",
         {"README.md": "# wordcount\n\nCounts the words of a text file.\n",
          "wordcount/__init__.py": "", "wordcount/__main__.py": "import sys\n\n"
                                                                 "print(len(open(sys.argv[1]).read().split()))\n"},
         check="grep -Eq '^#+ *Usage' README.md && grep -q 'python -m wordcount' README.md "
               "&& grep -q 'Counts the words' README.md"),
    Task("delete-dead-code", "delete dead code",
         "Delete the unused function old_parse from confparse/core.py.",
         {"confparse/__init__.py": "", "confparse/core.py": _PARSER, "confparse/test_core.py": _PARSER_TEST},
         check="! grep -q old_parse confparse/core.py && python -m pytest -q confparse",
         unchanged=("confparse/test_core.py",)),
    Task("gitignore", "edit a config file",
         "Make git ignore __pycache__ directories and the .env file.",
         {".gitignore": "*.log\n", ".env": "TOKEN=x\n"},
         check="mkdir -p a/__pycache__ && touch a/__pycache__/m.pyc && git check-ignore -q --no-index .env "
               "&& git check-ignore -q --no-index a/__pycache__/m.pyc && git check-ignore -q --no-index x.log"),
)


# Eight more of the kinds, one each, written late in round 9 and run as they are: no
# assist was tuned on them (the held-out check the issue asks for between rounds).
_CONVERT = '''\
def to_fahrenheit(celsius):
    """Degrees Celsius in degrees Fahrenheit."""
    return celsius * 9 / 5 - 32
'''
_CONVERT_TEST = '''\
from weather.convert import to_fahrenheit


def test_boiling():
    assert to_fahrenheit(100) == 212


def test_freezing():
    assert to_fahrenheit(0) == 32
'''
_AREA = '''\
def rectangle_area(width, height):
    return width + height


def square_area(side):
    return rectangle_area(side, side)
'''
_AREA_TEST = '''\
from shapes.area import rectangle_area, square_area


def test_rectangle():
    assert rectangle_area(3, 4) == 12


def test_square():
    assert square_area(5) == 25
'''
_WORDFREQ = '''\
from collections import Counter

TEXT = """the lantern swung and the lantern dimmed while a moth circled the lantern
and a lantern keeper watched the moth and the keeper of the lantern smiled"""

words = [w for w in TEXT.split() if len(w) > 3]
print("most common:", Counter(words).most_common(1)[0][0])
'''
_DB = "USERS = {1: \"ada\", 2: \"grace\"}\n\n\ndef get_user(user_id):\n    return USERS.get(user_id)\n"
_VIEWS = ("from accounts.db import get_user\n\n\ndef profile(user_id):\n    name = get_user(user_id)\n"
          "    return f\"profile of {name}\"\n")

HELD_OUT: tuple[Task, ...] = (
    Task("ho-countdown", "create a script",
         "Create a script countdown.py that prints the numbers 5 down to 1, one per line, and then Liftoff!",
         check="test \"$(python countdown.py)\" = \"$(printf '5\\n4\\n3\\n2\\n1\\nLiftoff!')\""),
    Task("ho-fahrenheit", "fix a failing test",
         "python -m pytest -q weather fails. Fix it.",
         {"weather/__init__.py": "", "weather/convert.py": _CONVERT, "weather/tests/__init__.py": "",
          "weather/tests/test_convert.py": _CONVERT_TEST},
         check="python -m pytest -q weather", unchanged=("weather/tests/test_convert.py",)),
    Task("ho-average", "add a function",
         "Add a function average(numbers) to stats/basic.py that returns the mean of a list of numbers.",
         {"stats/__init__.py": "", "stats/basic.py": "def total(numbers):\n    return sum(numbers)\n"},
         check="python -c \"from stats.basic import average, total; assert average([1, 2, 3, 4]) == 2.5; "
               "assert total([1, 2]) == 3\""),
    Task("ho-timeout", "answer from the code",
         "What is the default timeout, in seconds, that the HTTP client in this project uses?",
         {"client/__init__.py": "", "client/config.py": "DEFAULT_TIMEOUT = 37\nRETRIES = 4\n",
          "client/http.py": "from client.config import DEFAULT_TIMEOUT\n\n\ndef get(url, timeout=DEFAULT_TIMEOUT):\n"
                            "    return url, timeout\n"},
         answer=(r"\b37\b",)),
    Task("ho-wordfreq", "run a script and report",
         "Run python tools/wordfreq.py and tell me which word it says is the most common.",
         {"tools/wordfreq.py": _WORDFREQ},
         answer=(r"\blantern\b",)),
    Task("ho-port-json", "edit a JSON file",
         "In config.json, change the port from 8000 to 9090.",
         {"config.json": '{\n  "host": "localhost",\n  "port": 8000,\n  "debug": false\n}\n'},
         check="python -c \"import json; d=json.load(open('config.json')); "
               "assert d=={'host':'localhost','port':9090,'debug':False}, d\""),
    Task("ho-rename-user", "rename across files",
         "Rename the function get_user to fetch_user everywhere in the accounts package.",
         {"accounts/__init__.py": "", "accounts/db.py": _DB, "accounts/views.py": _VIEWS},
         check="! grep -rq get_user accounts && python -c \"from accounts.views import profile; "
               "from accounts.db import fetch_user; assert profile(1) == 'profile of ada'\""),
    Task("ho-area", "fix a bug a test shows",
         "shapes/test_area.py shows that rectangle_area is wrong. Fix the bug.",
         {"shapes/__init__.py": "", "shapes/area.py": _AREA, "shapes/test_area.py": _AREA_TEST},
         check="python -m pytest -q shapes", unchanged=("shapes/test_area.py",)),
)
TASKS = TASKS + HELD_OUT


def by_names(names: str | None) -> tuple[Task, ...]:
    """The tasks named in a comma-separated list (all of them for None); unknown names: ValueError."""
    if not names:
        return TASKS
    known = {t.name: t for t in TASKS}
    wanted = [n.strip() for n in names.split(",") if n.strip()]
    unknown = [n for n in wanted if n not in known]
    if unknown:
        raise ValueError(f"unknown task(s): {', '.join(unknown)}; known: {', '.join(known)}")
    return tuple(known[n] for n in wanted)
