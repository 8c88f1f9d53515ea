"""Behaviour-tree semantics, BT Expansion and successor prediction on the held-out pick-and-place domain
(claims `tree_of_skill:bt_expansion_and_ticks_match_hand_derivation`,
`tree_of_skill:successor_prediction_is_state_dependent`, and bad inputs), checked against hand-derived trees and
decision lists."""

import itertools

import pytest

from jaxlab.agents.tree_of_skill.behavior_tree import (
    Action,
    Condition,
    Fallback,
    Sequence,
    Status,
    applicable,
    apply_effects,
    bt_expand,
    imagine_tick,
    pick_and_place_actions,
    predict_successor,
    tick,
    tree_actions,
)

S, F, R = Status.SUCCESS, Status.FAILURE, Status.RUNNING
ACTS = {a.name: a for a in pick_and_place_actions()}
GOAL2 = ("At(A,R)", "At(B,R)")
UNIVERSE = ("HandEmpty", "Holding(A)", "Holding(B)", "Near(A)", "Near(B)", "Near(R)", "At(A,R)", "At(B,R)")


def C(x):
    return Condition(x)


def achieve(lit, act):
    a = ACTS[act]
    return Fallback((C(lit), Sequence((*(C(p) for p in a.pre), a))))


def hand_place_subtree(o):
    """Hand-derived expansion of At(o,R) when the whole plan is imagined."""
    move_o = Fallback((C(f"Near({o})"), Sequence((ACTS[f"MoveTo({o})"],))))
    pick = Fallback((C(f"Holding({o})"), Sequence((move_o, C("HandEmpty"), ACTS[f"Pick({o})"]))))
    move_r = Fallback((C("Near(R)"), Sequence((ACTS["MoveTo(R)"],))))
    return Fallback((C(f"At({o},R)"), Sequence((pick, move_r, ACTS[f"Place({o},R)"]))))


HAND_TREE = Sequence((hand_place_subtree("A"), hand_place_subtree("B")))


def hand_decision(s):
    """The full tree's tick worked out by hand as a decision list: (status, action name)."""
    for o in ("A", "B"):
        if f"At({o},R)" in s:
            continue
        if f"Holding({o})" in s:
            return (R, f"Place({o},R)") if "Near(R)" in s else (R, "MoveTo(R)")
        if f"Near({o})" not in s:
            return R, f"MoveTo({o})"
        return (R, f"Pick({o})") if "HandEmpty" in s else (F, None)
    return S, None


def all_states():
    for bits in itertools.product((0, 1), repeat=len(UNIVERSE)):
        yield frozenset(lit for lit, b in zip(UNIVERSE, bits, strict=True) if b)


def test_leaf_and_composite_semantics():
    s = {"x", "y"}
    assert tick(C("x"), s) == (S, None)
    assert tick(C("z"), s) == (F, None)
    a = Action("a")
    assert tick(a, s) == (R, a)
    assert tick(a, s, lambda _: S) == (S, a)
    assert tick(Sequence((C("x"), C("y"))), s) == (S, None)
    assert tick(Sequence((C("x"), C("z"), a)), s) == (F, None)  # stops before the action
    assert tick(Sequence((C("x"), a, C("z"))), s) == (R, a)  # running stops the tick
    assert tick(Fallback((C("z"), C("x"), a)), s) == (S, None)
    assert tick(Fallback((C("z"), a)), s, lambda _: F) == (F, None)
    assert tick(Fallback((C("z"), C("w"))), s) == (F, None)
    assert tick(Sequence(()), s) == (S, None)
    assert tick(Fallback(()), s) == (F, None)


def test_apply_effects_and_applicable():
    place = ACTS["Place(A,R)"]
    s = {"Holding(A)", "Near(R)", "Near(A)"}
    assert applicable(place, s)
    assert not applicable(place, {"Holding(A)"})
    assert apply_effects(place, s) == {"Near(R)", "Near(A)", "At(A,R)", "HandEmpty"}
    # delete before add: a literal in both stays
    both = Action("t", (), frozenset({"x"}), frozenset({"x", "y"}))
    assert apply_effects(both, {"x", "y", "z"}) == {"x", "z"}


def test_expansion_single_step_matches_hand_tree():
    """Plain BT Expansion (no imagination): expansion stops at the first RUNNING action."""
    bt = bt_expand(GOAL2, pick_and_place_actions(), {"HandEmpty"})
    move_a = Fallback((C("Near(A)"), Sequence((ACTS["MoveTo(A)"],))))
    pick_a = Fallback((C("Holding(A)"), Sequence((move_a, C("HandEmpty"), ACTS["Pick(A)"]))))
    want = Sequence((Fallback((C("At(A,R)"), Sequence((pick_a, C("Near(R)"), ACTS["Place(A,R)"])))),
                     C("At(B,R)")))
    assert bt == want
    assert tick(bt, {"HandEmpty"}) == (R, ACTS["MoveTo(A)"])
    # a single-literal goal that already holds stays a single condition
    assert bt_expand(("At(A,R)",), pick_and_place_actions(), {"At(A,R)"}) == C("At(A,R)")
    assert bt_expand(("Near(R)",), pick_and_place_actions(), set()) == achieve("Near(R)", "MoveTo(R)")


def test_expansion_with_imagination_matches_hand_tree_and_ticks():
    bt = bt_expand(GOAL2, pick_and_place_actions(), {"HandEmpty"}, imagine=True)
    assert bt == HAND_TREE
    assert [a.name for a in tree_actions(bt)] == ["MoveTo(A)", "Pick(A)", "MoveTo(R)", "Place(A,R)",
                                                  "MoveTo(B)", "Pick(B)", "MoveTo(R)", "Place(B,R)"]
    n_running = 0
    for s in all_states():  # all 256 states over the domain's literals
        st, act = tick(bt, s)
        assert (st, None if act is None else act.name) == hand_decision(s), sorted(s)
        n_running += st == R
    assert n_running > 100


def test_executing_the_plan_reaches_the_goal():
    bt = bt_expand(GOAL2, pick_and_place_actions(), {"HandEmpty"}, imagine=True)
    s, trace = frozenset({"HandEmpty"}), []
    for _ in range(20):
        st, act = tick(bt, s)
        if st != R:
            break
        assert applicable(act, s)
        trace.append(act.name)
        s = apply_effects(act, s)
    assert st == S
    assert trace == ["MoveTo(A)", "Pick(A)", "MoveTo(R)", "Place(A,R)", "MoveTo(B)", "Pick(B)", "MoveTo(R)",
                     "Place(B,R)"]


def test_successor_is_state_dependent():
    """Claim `tree_of_skill:successor_prediction_is_state_dependent`: after Place(A,R) comes MoveTo(B) unless At(B,R)
    already holds (then the task is done)."""
    bt = HAND_TREE
    place_a = ACTS["Place(A,R)"]
    assert predict_successor(bt, place_a, {"Holding(A)", "Near(R)"}) == ACTS["MoveTo(B)"]
    assert predict_successor(bt, place_a, {"Holding(A)", "Near(R)", "At(B,R)"}) is None
    assert imagine_tick(bt, place_a, {"Holding(A)", "Near(R)", "At(B,R)"})[0] == S
    # holding B already: the successor is Place(B,R) directly (another branch)
    assert predict_successor(bt, place_a, {"Holding(A)", "Near(R)", "Holding(B)"}) == ACTS["Place(B,R)"]
    # MoveTo(R)'s successor depends on what is held
    assert predict_successor(bt, ACTS["MoveTo(R)"], {"Holding(A)"}) == place_a
    assert predict_successor(bt, ACTS["MoveTo(R)"], {"Holding(B)", "At(A,R)"}) == ACTS["Place(B,R)"]
    # no plan: near A, not holding, hand not empty -> FAILURE, successor None
    stuck = Action("Stuck", (), frozenset({"Near(A)"}), frozenset({"HandEmpty", "Near(R)"}))
    assert imagine_tick(bt, stuck, {"Near(R)"}) == (F, None)
    assert predict_successor(bt, stuck, {"Near(R)"}) is None


def test_bad_inputs():
    with pytest.raises(ValueError, match="literal of type str"):
        Condition(3)
    with pytest.raises(ValueError, match="literal of type str"):
        Action("a", (1,))
    with pytest.raises(ValueError, match="add entry"):
        Action("a", (), frozenset({None}))
    with pytest.raises(ValueError, match="string"):
        Action("a", "x")
    with pytest.raises(ValueError, match=r"Action\.name"):
        Action("")
    with pytest.raises(ValueError, match="children"):
        Sequence((C("x"), "y"))
    with pytest.raises(ValueError, match="state entry"):
        tick(C("x"), {"x", 5})
    with pytest.raises(ValueError, match="string"):
        tick(C("x"), "x")
    with pytest.raises(ValueError, match="duplicate action name 'MoveTo"):
        bt_expand(GOAL2, (*pick_and_place_actions(), ACTS["MoveTo(A)"]), set())
    with pytest.raises(ValueError, match=r"no action achieves At\(C,R\)"):
        bt_expand(("At(A,R)", "At(C,R)"), pick_and_place_actions(), set())
    with pytest.raises(ValueError, match=r"no action achieves Key"):  # a precondition nobody achieves
        bt_expand(("Open",), (Action("open", ("Key",), frozenset({"Open"})),), set())
    with pytest.raises(ValueError, match="goal entry"):
        bt_expand(("x", 2), pick_and_place_actions(), set())
    with pytest.raises(ValueError, match="at least one"):
        bt_expand((), pick_and_place_actions(), set())
    with pytest.raises(ValueError, match="max_iters"):
        bt_expand(GOAL2, pick_and_place_actions(), set(), max_iters=0)


def test_cyclic_domain_and_cyclic_tree_raise():
    # p needs q, q needs p: expansion never ends -> error after max_iters naming the failing literal
    cyc = (Action("get_p", ("q",), frozenset({"p"})), Action("get_q", ("p",), frozenset({"q"})))
    with pytest.raises(ValueError, match=r"max_iters=20 .*last failing literal: [pq]"):
        bt_expand(("p",), cyc, set(), max_iters=20)
    # an action whose add set contains its own precondition cannot achieve it
    self_loop = (Action("loop", ("p",), frozenset({"p"})),)
    with pytest.raises(ValueError, match="no action achieves p"):
        bt_expand(("p",), self_loop, set())
    # a tree that contains itself (only possible by mutating a frozen node)
    seq = Sequence((C("x"),))
    object.__setattr__(seq, "children", (C("x"), seq))
    with pytest.raises(ValueError, match="cycle"):
        tick(seq, {"x"})


def test_nodes_are_hashable_values():
    a, b = pick_and_place_actions(), pick_and_place_actions()
    assert a == b and hash(HAND_TREE) == hash(bt_expand(GOAL2, b, {"HandEmpty"}, imagine=True))
    assert Action("a", ["x"], {"y"}) == Action("a", ("x",), frozenset({"y"}))
