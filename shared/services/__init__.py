"""Use cases, one per event kind; AWS is passed in through small interfaces."""
