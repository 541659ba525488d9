"""The words every room shares, on the ground floor so that any room may import them: ``errors``
(the exceptions that end a run with one clear line: ``GraphbenchError``, ``ConfigError``, ``DataError``,
``Diverged``, ``Pruned``) and ``splits`` (the split names, in order)."""
