"""`bench-input` prints each pipeline's images per second and ours against the others.
(What the figures are is for the benchmark to say on a real machine, not for a test.)"""

import re

from {{ cookiecutter.package }}.runtime.config import Config
from {{ cookiecutter.package }}.tools.bench_input import VARIANTS, bench


def test_bench_input_measures_every_pipeline_on_photo_like_jpegs_it_writes(tmp_path, capsys):
    cfg = Config(output_dir=str(tmp_path), image_size=64, batch_size=16)
    medians = bench(cfg, synthetic=True, images=96, repeats=2)
    printed = capsys.readouterr().out
    assert f"writing 96 photo-like JPEGs at 64x64 to {tmp_path}" in printed
    heading = r"^cores: \d+, records: 96 in 8 shards .*mean JPEG \d+\.\d KiB, 64x64, batch 16"
    assert re.search(heading, printed, re.MULTILINE)
    for name in VARIANTS:
        assert re.search(rf"^{name} +\d+ images/s \(median of 2\)$", printed, re.MULTILINE), name
        assert medians[name] > 0
    for other in ("DN", "DA", "B1"):
        assert re.search(rf"^OURS/{other} \d+\.\d\d$", printed, re.MULTILINE), other
    bench(cfg, synthetic=True, images=96, repeats=1)  # the set is written once, then reused
    assert "writing" not in capsys.readouterr().out
