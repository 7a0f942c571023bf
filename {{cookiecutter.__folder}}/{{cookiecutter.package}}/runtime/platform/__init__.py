"""Where a run happens: the Keras backend and the accelerator (TPU, GPUs, CPU, simulated
replicas, several processes), the inputs Kaggle attaches, the data and output folders, and
how files are written whole."""
