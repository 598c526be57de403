"""`python -m graphloom.bench` runs and prints its figures with their references (a smoke test:
speed is judged from the figures it prints, not here)."""

import pytest

from conftest import run_python


def test_loader_bench_prints_both_figures(planted_dir):
    result = run_python("-m", "graphloom.bench", "loader", "--data", planted_dir, "--rounds", "1",
                        "--batches", "3", "--batch-size", "50", "--fanouts", "3,3")
    assert result.returncode == 0, result.stderr
    assert "python:" in result.stdout and "c++ (same loader):" in result.stdout
    assert "ratio to c++" in result.stdout


def test_train_bench_runs(planted_dir):
    pytest.importorskip("torch_geometric", reason="SKIPPED: torch_geometric is not installed")
    result = run_python("-m", "graphloom.bench", "train", "--data", planted_dir, "--rounds", "1",
                        "--batches", "2", "--batch-size", "50", "--fanouts", "3,3", "--hidden",
                        "8")
    assert result.returncode == 0, result.stderr
    assert "graphloom loader:" in result.stdout
