"""treelab.store."""
