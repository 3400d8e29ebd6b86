"""Playing and training (treelab.play): self-play, parallel runs, opponent pools, the arena, the learning loop."""
