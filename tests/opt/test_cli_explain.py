from vyre_vk.cli import main


def test_emit_explain_shows_changed_passes(tmp_path, capsys):
    assert main(["emit", "vyre-libs::nn::mlp_backward", "--explain", "-o", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "* hoist_invariant: changed (h_acc, d_act, gh_act" in out and "gh depend only on `j`" in out
    assert "* workgroup_size: changed" in out and "  constant_fold: no change" in out
    assert "* fission: changed (stage 0: 2 independent loop chains {h_acc, d_act} {gh_act, licm_0}" in out
    assert "result: 3 kernel(s)" in out
    assert (tmp_path / "vyre-libs__nn__mlp_backward.stage2.spv").exists()  # emit wrote the 3 stages explained
