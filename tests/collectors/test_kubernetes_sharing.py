"""Shares read from node and pod JSON as the device plugins and HAMi write them, and the cent-exact
split of a node's cost: the pure parts behind tests/collectors/test_kubernetes_shares.py."""

from __future__ import annotations

import random
from fractions import Fraction
from typing import Any

from gpu_audit.catalog.shares import allocate, split_shares
from gpu_audit.collectors.kubernetes.sharing import NodeShares, node_shares, pod_share
from gpu_audit.core.resource import Gpu, Kind, Resource, Share
from gpu_audit.node_join import merge


def _spec(limits: dict[str, str], selector: dict[str, str] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "m", "resources": {"limits": limits}}]}
    if selector:
        spec["nodeSelector"] = selector
    return spec


def test_mig_single_strategy_counts_slices_of_the_product_labels_profile() -> None:
    labels = {
        "nvidia.com/mig.strategy": "single",
        "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3-MIG-1g.10gb",
        "nvidia.com/gpu.count": "14",  # single strategy: GFD counts MIG devices here
    }
    node = node_shares(labels, {"nvidia.com/gpu": "14"}, {}, "H100")
    assert node == NodeShares("mig", 2, 7, Fraction(14), {"1g.10gb": 14}, single=True)
    held = pod_share(_spec({"nvidia.com/gpu": "2"}), node, "H100")
    assert held is not None and (held.mode, held.profile, held.units) == ("mig", "1g.10gb", 2)
    three = node_shares(
        {**labels, "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB-MIG-3g.40gb"},
        {"nvidia.com/gpu": "4"},
        {},
        "A100-80GB",
    )
    assert three is not None and three.gpus == 2  # two 3g slices a GPU, one compute slice uncarved


def test_mps_renamed_to_gpu_shared_and_time_slicing_without_a_replicas_label() -> None:
    labels = {
        "nvidia.com/gpu.count": "4",
        "nvidia.com/gpu.replicas": "4",
        "nvidia.com/gpu.sharing-strategy": "mps",
    }
    node = node_shares(labels, {"nvidia.com/gpu": "0", "nvidia.com/gpu.shared": "16"}, {}, "T4")
    assert node == NodeShares("mps", 4, 4, Fraction(16), {})
    held = pod_share(_spec({"nvidia.com/gpu.shared": "1"}), node, "T4")
    assert held is not None and (held.mode, held.units, held.gpus) == ("mps", 1, Fraction(1, 4))
    # a malformed replicas label: the advertised count over the physical one
    odd = node_shares(
        {"nvidia.com/gpu.count": "2", "nvidia.com/gpu.replicas": "four",
         "nvidia.com/gpu.sharing-strategy": "time-slicing"},
        {"nvidia.com/gpu": "8"}, {}, "L4",
    )  # fmt: skip
    assert odd == NodeShares("time-slicing", 2, 4, Fraction(8), {})
    # a node of whole GPUs shares nothing
    whole = node_shares({"nvidia.com/gpu.count": "8"}, {"nvidia.com/gpu": "8"}, {}, "H100")
    assert whole is None


def test_hami_memory_in_mib_percent_or_unstated() -> None:
    node = node_shares(
        {"nvidia.com/gpu.memory": "23034"},
        {"nvidia.com/gpu": "10"},
        {"hami.io/node-nvidia-register": "GPU-a,10,23034,100,NVIDIA-L4,0,true:GPU-b,10,23034,"},
        "L4",
    )
    assert node == NodeShares("hami", 2, 100, Fraction(200), {}, 23034)
    mib = pod_share(_spec({"nvidia.com/gpu": "1", "nvidia.com/gpumem": "11517"}), node, "L4")
    assert mib is not None and mib.units == 50
    cores = pod_share(_spec({"nvidia.com/gpu": "2", "nvidia.com/gpucores": "30"}), node, "L4")
    assert cores is not None and cores.units == 200  # no memory stated: HAMi gives all of it
    assert pod_share(_spec({"cpu": "2"}), node, "L4") is None


def test_a_pending_pod_asking_for_a_slice_counts_its_selectors_gpu() -> None:
    held = pod_share(_spec({"nvidia.com/mig-2g.12gb": "1"}), None, "A30")
    assert held is not None and (held.units, held.per_gpu, held.profile) == (2, 4, "2g.12gb")
    assert pod_share(_spec({"nvidia.com/gpu": "1"}), None, "H100") is None


def test_the_split_adds_up_to_the_cent_whatever_the_weights() -> None:
    rng = random.Random(36)
    for _ in range(500):
        total = rng.randrange(0, 10_000_000)
        weights = [Fraction(rng.randrange(1, 50)) for _ in range(rng.randrange(1, 8))]
        offered = Fraction(rng.randrange(1, 300))
        amounts, idle = allocate(total, weights, offered)
        assert sum(amounts) + idle == total
        assert min(amounts, default=0) >= 0 and idle >= 0
        if sum(weights) >= offered:
            assert idle == 0  # overcommitted: the pods split the whole cost
    assert allocate(383_98, [Fraction(1)] * 3, Fraction(4)) == ([96_00, 96_00, 95_99], 95_99)


def _node(**share: Any) -> Resource:
    return Resource(
        kind=Kind.INSTANCE,
        provider="kubernetes",
        id="aws:///us-east-1a/i-0abc",
        name="ip-10-0-0-1",
        cluster="prod",
        gpu=Gpu(model="T4", count=1),
        monthly_cost_usd=383.98,
        share=Share(**share),
    )


def test_a_node_joined_to_its_ec2_instance_still_splits_over_its_pods() -> None:
    node = _node(mode="time-slicing", per_gpu=4, units=4, allocated=1, free=3,
                 node="aws:///us-east-1a/i-0abc")  # fmt: skip
    instance = Resource(
        kind=Kind.INSTANCE, provider="aws", id="i-0abc", gpu=Gpu(model="T4", count=1),
        monthly_cost_usd=383.98,
    )  # fmt: skip
    pod = Resource(
        kind=Kind.POD, provider="kubernetes", id="prod/team-a/p", gpu=Gpu(model="T4", count=1),
        share=Share(mode="time-slicing", per_gpu=4, units=1, node="aws:///us-east-1a/i-0abc"),
    )  # fmt: skip
    joined = merge(instance, node)
    priced = split_shares([joined, pod])
    assert priced[0].id == "i-0abc" and priced[0].share.idle_usd == 287.98
    assert priced[1].monthly_cost_usd == 96.0  # 95.995: the larger remainder takes the cent


def test_reports_name_the_share_a_pod_holds_and_a_node_leaves_free() -> None:
    from gpu_audit.report.summary import share_text

    assert share_text(Share(mode="mig", profile="1g.10gb", per_gpu=7, units=1)) == "MIG 1g.10gb"
    assert share_text(Share(mode="time-slicing", per_gpu=4, units=1)) == "1/4 time-slicing"
    assert share_text(Share(mode="hami", per_gpu=100, units=30)) == "HAMi 30%"
    node = Share(mode="mps", per_gpu=4, units=16, allocated=13, free=3)
    assert share_text(node) == "mps, 3 of 16 free"
    assert share_text(Share(per_gpu=7, units=7)) is None  # whole GPUs on a MIG node


def test_garbled_labels_and_quantities_share_nothing_rather_than_crash() -> None:
    hostile = {
        "nvidia.com/gpu.replicas": "<script>",
        "nvidia.com/gpu.count": "-3",
        "nvidia.com/mig.strategy": "single",
        "nvidia.com/gpu.product": "NVIDIA-H100-MIG-0g.10gb",  # no such profile
    }
    capacity = {"nvidia.com/gpu": "2Ki", "nvidia.com/mig-0g.10gb": "3", "nvidia.com/mig-x": "1"}
    assert node_shares(hostile, capacity, {}, "H100") is None
    assert (
        node_shares(hostile, {"nvidia.com/gpu": "1e9"}, {"hami.io/node-nvidia-register": 5}, None)
        is None
    )
    overfull = node_shares(
        {}, {"nvidia.com/mig-7g.80gb": "1", "nvidia.com/mig-99g.1gb": "1"}, {}, None
    )
    assert overfull is not None and overfull.gpus == 16  # 106 slices: 16 GPUs' worth, none lost
    held = pod_share(
        _spec({"nvidia.com/mig-1g.10gb": "one", "nvidia.com/gpu": "-1"}), overfull, None
    )
    assert held is None


def test_a_scale_set_joined_from_several_shared_nodes_is_not_split_as_one_node() -> None:
    from dataclasses import replace

    from gpu_audit.node_join import join_nodes

    vmss = (
        "/subscriptions/s/resourcegroups/g/providers/microsoft.compute/virtualmachinescalesets/ss"
    )
    nodes = [
        replace(_node(mode="time-slicing", per_gpu=4, units=4, free=4, node=f"azure://{vmss}/virtualMachines/{n}"),
                id=f"azure://{vmss}/virtualMachines/{n}")
        for n in (0, 1)
    ]  # fmt: skip
    scale_set = Resource(kind=Kind.INSTANCE, provider="azure", id=vmss, gpu=Gpu(count=2))
    (joined,) = join_nodes([scale_set, *nodes])
    assert joined.cluster == "prod" and joined.share == Share()
    (single,) = join_nodes([scale_set, nodes[0]])
    assert single.share.node == f"azure://{vmss}/virtualMachines/0"
