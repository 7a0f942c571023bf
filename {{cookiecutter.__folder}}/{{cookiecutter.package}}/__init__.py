"""A Kaggle image-classification starter that trains on TPU, GPU or CPU; see README.md.

Importing the package picks the Keras backend this machine's accelerator needs (JAX on
Kaggle's TPU image, TensorFlow elsewhere) unless $KERAS_BACKEND says otherwise: Keras reads it
once, when something first imports keras or tensorflow. `accelerator.detect` does the rest.
"""

from .runtime.platform import backend

backend.choose()
