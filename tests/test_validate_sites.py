"""Site presets for validation: what the trace headers say, checked on schedules worked out by hand."""

from __future__ import annotations

from pathlib import Path

from o2ksim import simulate
from o2ksim.policies import presets


def test_kth_and_hpc2n_presets_are_easy():
    # EASY (KTH-SP2's header) and Maui with its default weights (HPC2N's): FCFS order,
    # one dynamic reservation -- fcfs-backfill's parameters
    easy = presets()["fcfs-backfill"]
    for name in ("kth-sp2-easy", "hpc2n-maui"):
        p = presets()[name]
        assert p.kind == easy.kind == "backfill" and p.params == easy.params


def test_sdsc_blue_queues_ranks_by_queue_then_submission(tmp_path: Path):
    # 2 processors.  Job 1 (normal) holds both 0-100.  Job 2 (standby) arrives at 10, job 3
    # (high) at 20, job 4 (interactive: unranked, as normal) at 30, each wanting both for 100 s.
    # By rank: job 3 at 100, job 4 at 200, job 2 (standby, lowest) at 300; FCFS: 2, 3, 4.
    rows = [(1, 0, 3), (2, 10, 5), (3, 20, 2), (4, 30, 0)]
    text = "; MaxProcs: 2\n" + "".join(
        f"{j} {s} -1 100 2 -1 -1 2 100 -1 1 1 1 -1 {q} -1 -1 -1\n" for j, s, q in rows
    )
    path = tmp_path / "blue.swf"
    path.write_text(text)
    starts = simulate(str(path), None, "sdsc-blue-queues").jobs.set_index("job_id")["start"].to_dict()
    assert starts == {1: 0, 2: 300, 3: 100, 4: 200}
    fcfs = simulate(str(path), None, "fcfs-backfill").jobs.set_index("job_id")["start"].to_dict()
    assert fcfs == {1: 0, 2: 100, 3: 200, 4: 300}
