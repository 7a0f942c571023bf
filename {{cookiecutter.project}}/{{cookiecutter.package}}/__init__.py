"""A Kaggle image-classification starter that trains on TPU, GPU or CPU; see README.md."""
