"""What a run needs, from the config to submission.csv: the modules the notebook carries.

The config (config.py), the accelerator and its Keras backend, the data (data/), the model,
then the steps a notebook runs in order: doctor, preview, train, evaluate, predict.
"""
