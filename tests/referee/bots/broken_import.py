"""Cannot even be imported."""

raise ImportError("this bot needs a module that is not installed")
