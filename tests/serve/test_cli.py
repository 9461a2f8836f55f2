"""The command line: `tensorlib serve` reaches the serve parser; bad flags exit 2."""
import pytest

from tensorlib.__main__ import main as tensorlib_main
from tensorlib.serve.__main__ import main as serve_main


def test_tensorlib_serve_is_a_subcommand(capsys):
    with pytest.raises(SystemExit) as exc:
        tensorlib_main(["serve", "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "--max-batch-delay" in out and "NAME=PATH" in out


@pytest.mark.parametrize("argv, words", [
    (["--model", "nopath"], "expected NAME=PATH"),
    (["--model", "a=x.tlj", "--model", "a=y.tlj"], "given twice"),
    (["--batch-size", "0"], "--batch-size must be >= 1"),
    (["--threads", "0"], "--threads must be >= 1"),
])
def test_bad_flags(argv, words, capsys):
    with pytest.raises(SystemExit) as exc:
        serve_main(argv)
    assert exc.value.code == 2 or words in str(exc.value.code)
    assert words in capsys.readouterr().err + str(exc.value.code)
