"""What each command does, in the order a run does it: the checks before the first step
(preflight, doctor), a look at the data (preview), train and its folds, evaluate, predict."""
