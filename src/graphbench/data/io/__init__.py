"""Reading raw files: the data root and opt-in downloads, archives, safe loaders of pickles."""
