"""What a run needs, from the config to submission.csv: the modules the notebook carries.

Its rooms: config.py (every knob), errors.py (the one-line errors), backbone_choices.py (the
backbones on offer); stages/ (what each command does: preflight, doctor, preview, train, folds,
evaluate, predict); platform/ (the accelerator and Keras backend, Kaggle's inputs, folders and
files); data/ (where examples come from and how they reach the model); learning/ (the model,
augmentation, the run's numbers, metrics); outputs/ (checkpoints, pictures, submission.csv).
"""
