from vyre_vk.cli import main


def test_emit_explain_shows_changed_passes(tmp_path, capsys):
    assert main(["emit", "vyre-libs::nn::mlp_backward", "--explain", "-o", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "* hoist_invariant: changed (h_acc, d_act, gh_act" in out and "gh depend only on `j`" in out
    assert "* workgroup_size: changed" in out and "  constant_fold: no change" in out
    assert "* fission: changed (stage 0: 2 independent loop chains {h_acc, d_act} {gh_act, licm_0}" in out
    assert "result: 3 kernel(s)" in out
    assert (tmp_path / "vyre-libs__nn__mlp_backward.stage2.spv").exists()  # emit wrote the 3 stages explained


def test_emit_explain_says_why_stream_fired(tmp_path, capsys, monkeypatch):
    """The stream pass (VYRE_VK_STREAM=1): emit --explain names the chains, the shape and the tile;
    for nvidia the tile is sized by 48 KB of workgroup memory (2 x 256 x 9 words of w, 2 x 256 of x)."""
    monkeypatch.setenv("VYRE_VK_STREAM", "1")
    args = ["emit", "vyre-libs::nn::linear_relu", "--arg", "in_dim=1024", "--arg", "out_dim=1024", "--explain",
            "--device-class", "nvidia", "-o", str(tmp_path)]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert ("* stream: changed (loop k: 1024 chains of 1024 steps, 8 per workgroup of 256 lanes: every lane loads "
            "its share of the next 8x256 tile of x, w") in out
    glsl = (tmp_path / "vyre-libs__nn__linear_relu.stage0.comp").read_text()
    assert "shared float b_opt_st_x0[512];" in glsl and "shared float b_opt_st_w1[4608];" in glsl
