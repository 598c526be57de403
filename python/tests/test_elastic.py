"""torchrun's own restarts: `torchrun --max-restarts 1 --no-python graphloom train ...` whose
rank 1 is killed once. torchrun starts both ranks again (TORCHELASTIC_RESTART_COUNT=1); they
resume from the step checkpoint and end as the undisturbed job ends."""

import json
import os
import pathlib
import signal
import subprocess
import sys
import time

from conftest import GRAPHLOOM_CLI

# A small model: ~0.25 s an epoch here, so the kill after the first checkpoint (step 4 of 5 an
# epoch) lands with seconds of the job left.
EPOCHS = 20


def torchrun_train(tmp_path, name):
    checkpoint = tmp_path / f"{name}.pt"
    log = tmp_path / f"{name}.jsonl"
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone",
               "--nproc-per-node", "2", "--max-restarts", "1", "--no-python",
               str(GRAPHLOOM_CLI), "train", "--epochs", str(EPOCHS), "--no-progress", "--no-test",
               "--hidden", "32", "--fanouts", "5,5",
               "--checkpoint", str(checkpoint), "--checkpoint-every", "4",
               "--metrics-log", str(log)]
    output = open(tmp_path / f"{name}.out", "w")
    return subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT), checkpoint, log


def trainers_of(checkpoint):
    """The pids of the graphloom trainers writing `checkpoint` (torchrun's workers)."""
    pids = []
    for entry in pathlib.Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv and argv[0].endswith(b"graphloom") and str(checkpoint).encode() in argv:
            pids.append(int(entry.name))
    return sorted(pids)


def test_torchrun_restart_resumes_from_the_checkpoint(tmp_path):
    undisturbed, _, undisturbed_log = torchrun_train(tmp_path, "undisturbed")
    assert undisturbed.wait(timeout=600) == 0, (tmp_path / "undisturbed.out").read_text()

    job, checkpoint, log = torchrun_train(tmp_path, "disturbed")
    deadline = time.time() + 120
    while not checkpoint.exists() and time.time() < deadline:
        time.sleep(0.1)
    assert checkpoint.exists(), (tmp_path / "disturbed.out").read_text()
    trainers = trainers_of(checkpoint)
    assert len(trainers) == 2, trainers
    os.kill(trainers[1], signal.SIGKILL)
    assert job.wait(timeout=600) == 0, (tmp_path / "disturbed.out").read_text()
    output = (tmp_path / "disturbed.out").read_text()
    assert "restart 1 of this job: resuming from its checkpoint" in output, output
    # The epochs after the resumed one ran from the same parameters: the same losses, bitwise
    # (the logged float's every digit).
    expected = [json.loads(line) for line in undisturbed_log.read_text().splitlines()]
    resumed = [json.loads(line) for line in log.read_text().splitlines()]
    assert expected[-1]["epoch"] == resumed[-1]["epoch"] == EPOCHS - 1
    assert resumed[-1]["loss"] == expected[-1]["loss"]
    assert resumed[-1]["train_acc"] == expected[-1]["train_acc"]
