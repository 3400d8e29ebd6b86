"""treelab.view."""
