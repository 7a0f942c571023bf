"""The model and what judges it: the backbone and its head, augmentation, the run's numbers
(batch, steps, precision, learning rate), probabilities over batches, multi-label thresholds and
the competition's metrics."""
