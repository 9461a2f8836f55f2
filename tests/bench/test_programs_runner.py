"""benchmarks/programs/run.py on a mirror made here: a program is extracted from the mirror's
HEAD, run unchanged under the torch compatibility runner, and reported with its last error
line; a data file the mirror lacks is reported as a download, not run."""
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

RUNNER = Path(__file__).resolve().parents[2] / "benchmarks" / "programs" / "run.py"


@pytest.fixture(scope="module")
def runner():
    spec = importlib.util.spec_from_file_location("programs_run", RUNNER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def mirrors(tmp_path):
    repo = tmp_path / "mirrors" / "someone+tiny" / "repo"
    (repo / "app").mkdir(parents=True)
    (repo / "app" / "train.py").write_text(
        "import sys, torch, tensorlib\n"
        "assert torch.ones(2).__class__ is tensorlib.Tensor\n"
        "print(open('data.txt').read().strip(), sys.argv[1:])\n")
    (repo / "app" / "broken.py").write_text("import torch\ntorch.no_such_function()\n")
    cells = [{"cell_type": "markdown", "source": ["# not code"]},
             {"cell_type": "code", "source": ["%matplotlib inline\n", "import torch\n",
                                              "x = torch.ones(3)"]},
             {"cell_type": "code", "source": ["!pip install nothing\n", "print(x.sum().item())"]}]
    (repo / "app" / "book.ipynb").write_text(json.dumps({"cells": cells}))
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(git[:3] + ["init", "-q"], check=True)
    subprocess.run(git + ["add", "."], check=True)
    subprocess.run(git + ["commit", "-qm", "tiny"], check=True)
    return tmp_path / "mirrors"


def test_runs_extracted_programs_and_reports_errors(runner, mirrors, tmp_path):
    data = [("someone/tiny", "app/train.py", "data.txt")]   # any blob stands in as data
    programs = [
        runner.Program("tiny ok", "someone/tiny", "app", ["train.py", "--steps", "1"], "x",
                       data=data),
        runner.Program("tiny broken", "someone/tiny", "app", ["broken.py"], "x"),
        runner.Program("tiny lacks data", "someone/tiny", "app", ["train.py"], "x",
                       data=[("someone/tiny", "app/absent.bin", "data.txt")]),
        runner.Program("not fetched", "someone/else", "", ["x.py"], "x"),
        runner.Program("tiny notebook", "someone/tiny", "app", ["book.ipynb"], "x"),
        runner.Program("tiny on a GPU", "someone/tiny", "app", ["train.py"], "x",
                       needs="a GPU (device='cuda')"),
        runner.Program("tiny stand-in", "someone/tiny", "app", ["train.py"], "x",
                       data=[("someone/tiny", "app/train.py", "data.txt",
                              lambda blob: b"made from %d bytes" % len(blob))]),
    ]
    logs = tmp_path / "logs"
    logs.mkdir()
    rows = {r["name"]: r for r in runner.run_corpus(programs, str(mirrors), [], False, 120,
                                                      str(logs))}
    assert rows["tiny ok"]["result"] == "passes"
    assert "AttributeError" in rows["tiny broken"]["result"]
    assert "no_such_function" in rows["tiny broken"]["result"]
    assert rows["tiny lacks data"]["result"].startswith("not run: needs a download")
    assert rows["not fetched"]["result"].startswith("not run: mirror missing")
    assert rows["tiny notebook"]["result"] == "passes"        # magics and shell lines left out
    assert "3.0" in (logs / "tiny_notebook.tensorlib.log").read_text()
    assert rows["tiny on a GPU"]["result"] == "not run: needs a GPU (device='cuda')"
    assert rows["tiny stand-in"]["result"] == "passes"
    assert "made from" in (logs / "tiny_stand-in.tensorlib.log").read_text()
    ok_log = (logs / "tiny_ok.tensorlib.log").read_text()
    assert "['--steps', '1']" in ok_log
    table = runner.markdown(list(rows.values()))
    assert table.count("\n") == 2 + len(programs)


def test_the_cora_stand_in_has_coras_format_for_every_cited_paper(runner):
    from corpus import cora_content
    cites = b"35\t1033\n35\t103482\n1033\t7\n"
    lines = cora_content(cites).decode().splitlines()
    rows = [line.split("\t") for line in lines]
    assert [r[0] for r in rows] == ["7", "35", "1033", "103482"]
    assert all(len(r) == 1 + 1433 + 1 for r in rows)
    assert all(set(r[1:-1]) <= {"0", "1"} and "1" in r[1:-1] for r in rows)
    assert cora_content(cites) == cora_content(cites)          # a fixed seed
