"""The games (treelab.games): the rules, the game interface, your own game, OpenSpiel."""
