#!/usr/bin/env python3
"""An AI agent in Python that shops where zkagent guards the orders.

It browses a shop's catalog and orders its cheapest product through
`zkagent fetch` (a curl that answers ZKAgent challenges), so the proofs, the
signing and the checks before each proof stay in zkagent's own CLI, and the
agent's secrets never enter this process. Standard library only.

    python3 agent.py SHOP_URL --identity agent.json [--max-amount 50 --currency EUR]

`agent.json` is what `zkagent identity new --agent-id ID --json` prints, its
commitment registered under the shop's API key (`zkagent agents register`).
ZKAGENT names the command to run (default `zkagent`; e.g. "npx zkagent" with
@zkagent/agent installed, or "bun /path/to/zkagent/src/cli/index.ts").
"""
import argparse
import json
import os
import shlex
import subprocess
import sys

ZKAGENT = shlex.split(os.environ.get("ZKAGENT", "zkagent"))


class Refused(Exception):
    """zkagent fetch exited 1: a challenge it refused to prove (named field), or the server's refusal (its error, reason, message)."""


class Unreachable(Exception):
    """zkagent fetch exited 3: the URL could not be reached."""


def zkagent_fetch(url, identity, body=None, max_amount=None, currency=None):
    """The response body of a request that answers ZKAgent challenges, parsed as JSON."""
    command = [*ZKAGENT, "fetch", url, "--identity", identity]
    if body is not None:
        command += ["-d", json.dumps(body)]
    if max_amount is not None:
        command += ["--max-amount", max_amount, "--currency", currency]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode == 3:
        raise Unreachable(done.stderr.strip())
    if done.returncode != 0:
        raise Refused(done.stderr.strip())
    return json.loads(done.stdout)


def main():
    parser = argparse.ArgumentParser(description="Order the cheapest product of a zkagent-guarded shop.")
    parser.add_argument("shop")
    parser.add_argument("--identity", required=True)
    parser.add_argument("--max-amount")
    parser.add_argument("--currency")
    args = parser.parse_args()
    limit = {"max_amount": args.max_amount, "currency": args.currency}
    try:
        # The catalog binds no amount: a limited agent may browse it.
        catalog = zkagent_fetch(f"{args.shop}/catalog", args.identity, **limit)
        product = min(catalog["products"], key=lambda p: float(p["price"]))
        order = zkagent_fetch(
            f"{args.shop}/orders",
            args.identity,
            body={"amount": product["price"], "currency": product["currency"]},
            **limit,
        )
    except (Refused, Unreachable) as error:
        print(f"agent: {error}", file=sys.stderr)
        return 1
    print(json.dumps({"product": product["sku"], "order": order}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
