"""What-if studies of pruned networks: network manifests, pruning patterns, where each
layer's kernel runs, and the study that sums them per network."""
