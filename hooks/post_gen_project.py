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
  make demo      # builds a small offline digits competition, trains, writes submission.csv
  make doctor    # checks the accelerator and the competition data before a long run
  make train     # trains on the competition data (/kaggle/input/{ANSWERS["competition"]} or DATA_DIR)
  make help      # every target
"""
)
