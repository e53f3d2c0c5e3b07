# SPDX-License-Identifier: GPL-2.0-only
"""python3 tests/dashboard.py exprs|names DASHBOARD.json

  exprs  every panel target's PromQL, with the dashboard's variables given
         values a test can query ($instance: every node, $__rate_interval: 5s),
         one a line
  names  the xputop_* metric names the expressions use, one a line"""
import json
import re
import sys


def exprs(path):
    with open(path, encoding="utf-8") as f:
        dash = json.load(f)
    for panel in dash["panels"]:
        for target in panel.get("targets", []):
            yield target["expr"].replace("$instance", ".*").replace("$__rate_interval", "5s")


def main():
    what, path = sys.argv[1], sys.argv[2]
    if what == "exprs":
        for e in exprs(path):
            print(e)
    elif what == "names":
        names = set()
        for e in exprs(path):
            names.update(re.findall(r"\bxputop_[a-z0-9_]+", e))
        print("\n".join(sorted(names)))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
