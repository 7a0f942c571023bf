"""What a competitor runs from a shell, never in the notebook: the notebook writer, the
kaggle commands, the records writer, the offline demo and the benchmarks."""
