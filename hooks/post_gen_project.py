"""Tell the competitor what to do next. No network, no git: the project is theirs to shape."""

import json

ANSWERS = json.loads(
    r"""
{{ cookiecutter | tojson }}
""".strip()
)

print(
    f"""
Created {ANSWERS["project"]}/ for the Kaggle competition {ANSWERS["competition"]}.

Next steps:
  cd {ANSWERS["project"]}
  make demo      # try it offline: a small digits competition, trained and scored on the CPU
  make kernel    # the Kaggle notebook for a TPU; `make help` lists every target

README.md has the three recipes, a few commands each: try it offline, a classic competition
trained on Kaggle's TPU, and a code competition (a training notebook on the TPU, and the
inference notebook Kaggle reruns on the hidden test set).
"""
)
