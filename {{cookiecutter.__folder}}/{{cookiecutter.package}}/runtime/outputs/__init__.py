"""What a run leaves: checkpoints and the record of the run that made them, the pictures, and
submission.csv in the shape the sample asks for."""
