"""``python -m benchmarks``: run the benchmark suite and print its markdown table."""

from benchmarks.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
