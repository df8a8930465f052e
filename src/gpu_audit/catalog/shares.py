"""A shared GPU node's cost split over the pods holding its shares, adding up to the cent.

Each pod on a shared node (`share.node`) pays the node's monthly cost times its shares over the
shares the node's GPUs offer (`share.units`); what no pod holds is the node's idle cost
(`share.idle_usd`). Amounts are whole cents: each exact amount is cut down to the cent and the
cents left over go, one each, to the largest remainders (pods in id order, then idle on ties),
so pods + idle = the node's cost exactly. Pods on a node holding more shares than it offers (an
overcommitted HAMi node) split the whole cost by their shares and leave no idle cost.
docs/shared-gpus.md has the method and its sources.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from fractions import Fraction

from gpu_audit.catalog.enrich import HOURS_PER_MONTH
from gpu_audit.core.resource import Kind, Resource


def split_shares(resources: Sequence[Resource]) -> tuple[Resource, ...]:
    """The resources with each shared node's pods priced at their share and its idle cost set."""
    items = list(resources)
    if not any(r.share.node for r in items):
        return tuple(items)
    # a node names itself in `share.node`, which stays when it joins its cloud instance
    nodes = {
        item.share.node: index
        for index, item in enumerate(items)
        if item.kind is Kind.INSTANCE and item.share.units and item.share.node
    }
    held: dict[int, list[int]] = {}
    for index, item in enumerate(items):
        ref = item.share.node
        if item.kind is not Kind.POD or not ref or item.share.units is None:
            continue
        found = nodes.get(ref)
        if found is not None:
            held.setdefault(found, []).append(index)
    for node_index, pods in held.items():
        _split(items, node_index, sorted(pods, key=lambda i: items[i].id))
    return tuple(items)


def _split(items: list[Resource], node_index: int, pods: list[int]) -> None:
    node = items[node_index]
    if node.monthly_cost_usd is None or not node.share.units:
        return
    total = round(node.monthly_cost_usd * 100)
    weights = [Fraction(str(items[i].share.units)) for i in pods]
    amounts, idle = allocate(total, weights, Fraction(str(node.share.units)))
    for index, cents in zip(pods, amounts, strict=True):
        pod = items[index]
        monthly = cents / 100
        price = replace(pod.price, hourly_usd=round(monthly / HOURS_PER_MONTH, 5))
        items[index] = replace(pod, monthly_cost_usd=monthly, price=price)
    items[node_index] = replace(node, share=replace(node.share, idle_usd=idle / 100))


def allocate(total: int, weights: list[Fraction], offered: Fraction) -> tuple[list[int], int]:
    """`total` cents split by `weights` out of `offered` (the rest idle), in whole cents that
    add up: largest remainders take the cents left over."""
    whole = max(offered, sum(weights, Fraction(0)))
    if whole <= 0:
        return [0] * len(weights), total
    exact = [total * w / whole for w in weights]
    exact.append(total - sum(exact, Fraction(0)))  # idle
    floors = [int(e) for e in exact]  # non-negative: int() is the floor
    left = total - sum(floors)
    order = sorted(range(len(exact)), key=lambda i: (-(exact[i] - floors[i]), i))
    for i in order[:left]:
        floors[i] += 1
    return floors[:-1], floors[-1]
