"""Command line: ``sklearn-mace demo`` (also ``python -m sklearn_mace demo``)."""

import argparse
import sys


def build_parser():
    parser = argparse.ArgumentParser(
        prog="sklearn-mace", description="Membership-inference auditing with scikit-learn."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser("demo", help="run the main job on the embedded default data")
    demo.add_argument("--random-state", type=int, default=0)
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    if args.command == "demo":
        from ._demo import run_demo

        run_demo(random_state=args.random_state)
    return 0


if __name__ == "__main__":
    sys.exit(main())
