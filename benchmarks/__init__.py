"""graphbench's performance benchmarks: every figure is a ratio (or an absolute target) measured
side by side in one run, the two contenders interleaved and repeated, medians reported.

    python -m benchmarks --data-dir ../shared/data                 # everything, full size
    python -m benchmarks --only overhead,pe --repeats 5            # a selection
    python -m benchmarks --quick                                   # tiny smoke version (tests)
"""
