"""What the example tests share: running an example as a user runs it, and reading its figures."""

import re

from conftest import REPO, run_python


def final_figure(output, name):
    found = re.findall(rf"{name} ([0-9.]+)", output)
    assert found, output
    return float(found[-1])


def final_accuracy(output, split):
    return final_figure(output, f"{split} accuracy")


def run_example(name, data, *args):
    result = run_python(REPO / "examples" / name, "--data", data, *args)
    assert result.returncode == 0, result.stderr
    return result.stdout


def torchrun(*args):
    return run_python("-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
                      *args)


def link_prediction_auc(example, data, epochs):
    """The final test AUC of a link-prediction example run for `epochs`."""
    return final_figure(run_example(example, data, "--epochs", str(epochs)), "test auc")
