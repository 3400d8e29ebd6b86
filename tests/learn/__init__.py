"""Policy/value models (treelab.learn): fitted, saved, loaded and searched with."""
