"""vyre's GeneratorRef and region helpers (vyre-harness region.rs): wrap / wrap_child take the parent
as a GeneratorRef or its name alike; reparent_program_children and tag_program as vyre has them,
checked against the rules in IR-SPEC 7.2 and against the ops' own earlier copies."""
import doctest

import pytest

import vyre_vk.ir.node as node_mod
import vyre_vk.ir.program as program_mod
from vyre_vk import reference
from vyre_vk.ir import (SELF_EXCLUSIVE_REGION_SUFFIX, BufferDecl, DataType, Expr, GeneratorRef, IRError, Node, Program,
                        Region, mark_self_exclusive_region, reparent_program_children, tag_program, validate, wrap,
                        wrap_anonymous, wrap_child)
from vyre_vk.ops.nn.linear.tiled import tag_program as linear_tag_program
from vyre_vk.ops.parsing.common import tag_program as parsing_tag_program
from vyre_vk.ops.security.region import tag_program as security_tag_program

BODY = [Node.store("out", Expr.gid_x(), Expr.u32(7))]
BUFS = [BufferDecl.output("out", 0, DataType.U32).with_count(4)]


def test_generator_ref_has_vyres_one_field_and_regions_keep_its_name():
    ref = GeneratorRef("vyre-libs::nn::linear")
    assert ref.name == "vyre-libs::nn::linear" and ref == GeneratorRef("vyre-libs::nn::linear") and hash(ref)
    with pytest.raises(IRError, match="GeneratorRef name must be a string"):
        GeneratorRef(5)
    by_ref, by_name = wrap_child("child", ref, BODY), wrap_child("child", "vyre-libs::nn::linear", BODY)
    assert by_ref == by_name and hash(by_ref) == hash(by_name)
    assert by_ref.source_region == "vyre-libs::nn::linear" and by_ref.source_ref == ref
    assert wrap("g", BODY, ref) == wrap("g", BODY, ref.name) == Node.region("g", BODY, ref) == Region("g", ref, BODY)
    assert wrap_anonymous("g", BODY).source_ref is None and wrap("g", BODY).source_region is None
    with pytest.raises(IRError, match="wrap_child needs a parent"):
        wrap_child("child", None, BODY)
    with pytest.raises(IRError):
        wrap_child("child", 3, BODY)
    # the JSON form and the content hash do not depend on how the parent was given
    p_ref = Program.wrapped(BUFS, (4, 1, 1), [wrap_anonymous("op", [by_ref])])
    p_name = Program.wrapped(BUFS, (4, 1, 1), [wrap_anonymous("op", [by_name])])
    assert p_ref.to_json() == p_name.to_json() and p_ref.content_hash() == p_name.content_hash()
    assert Program.from_json(p_ref.to_json()).entry[0].body[0].source_ref == ref


def test_reparent_program_children_follows_vyre():
    # Program.new keeps a non-Region entry node: it is wrapped as inline::<parent>
    raw = Program.new(BUFS, (4, 1, 1), [Region("vyre.program.root", None, BODY), Region("prim", "old", BODY),
                                         Node.barrier()])
    kids = reparent_program_children(raw, "parent::op")
    assert [(k.generator, k.source_region) for k in kids] == [
        ("inline::parent::op", "parent::op"), ("prim", "parent::op"), ("inline::parent::op", "parent::op")]
    assert kids[0].body == tuple(BODY) and kids[1].body == tuple(BODY) and kids[2].body == (Node.barrier(),)
    assert all(k.source_ref == GeneratorRef("parent::op") for k in kids)


@pytest.mark.parametrize("non_composable", [False, True])
def test_tag_program_follows_vyre_and_keeps_the_meaning(non_composable):
    inner = Program.wrapped(BUFS, (4, 1, 1), [wrap_anonymous("vyre-primitives::x", BODY), wrap_anonymous("y", BODY)])
    inner = Program(inner.buffers, inner.workgroup_size, inner.entry, None, non_composable)
    t = tag_program("vyre-libs::demo", inner)
    gen = "vyre-libs::demo" + (SELF_EXCLUSIVE_REGION_SUFFIX if non_composable else "")
    assert t.buffers == inner.buffers and t.workgroup_size == inner.workgroup_size
    assert t.non_composable_with_self is non_composable and len(t.entry) == 1
    assert (t.entry[0].generator, t.entry[0].source_region) == (gen, None)
    assert [(c.generator, c.source_region) for c in t.entry[0].body] == [
        ("vyre-primitives::x", "vyre-libs::demo"), ("y", "vyre-libs::demo")]
    assert gen == (mark_self_exclusive_region("vyre-libs::demo") if non_composable else "vyre-libs::demo")
    # the ops' earlier copies agree (the security and linear ones never set the self-exclusive marker)
    assert parsing_tag_program("vyre-libs::demo", inner) == t
    if not non_composable:
        assert security_tag_program("vyre-libs::demo", inner) == t == linear_tag_program("vyre-libs::demo", inner)
    validate(t)
    assert reference.run(t, {})["out"].tolist() == reference.run(inner, {})["out"].tolist() == [7] * 4
    # a root Region (Program.wrapped around plain statements) becomes inline::<parent>
    root = tag_program("p", Program.wrapped(BUFS, (4, 1, 1), BODY))
    assert [(c.generator, c.source_region) for c in root.entry[0].body] == [("inline::p", "p")]


@pytest.mark.parametrize("obj", [node_mod.GeneratorRef, program_mod.wrap_child, program_mod.reparent_program_children,
                                 program_mod.tag_program, program_mod.mark_self_exclusive_region])
def test_docstring_examples(obj):
    mod = node_mod if obj is node_mod.GeneratorRef else program_mod
    finder = doctest.DocTestFinder(recurse=False)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    tests = finder.find(obj, globs=vars(mod))
    assert tests and any(t.examples for t in tests)
    for t in tests:
        runner.run(t)
    assert runner.failures == 0

