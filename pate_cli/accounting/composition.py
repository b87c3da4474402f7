"""The composition kernel: per-query RDP rows, running sums and conversion to epsilon.

MATH.md sections 5-7. Composition is a sum over queries at each order; the cumulative
curve after query i is ``cum_{i-1} + rdp_i`` added in query order, in cache-sized
slices, with an explicit carry across chunks, so every figure is identical whatever the
chunk size. Conversion adds the per-order offset of ``conversion.conversion_offset`` and
takes the minimum over orders; the improved conversion is clipped at 0.
"""

from __future__ import annotations

import numpy as np

# Rows of (queries x orders) work arrays processed at once: about 1 MB per array, so the
# element-wise passes stay in cache.
WORK_ELEMENTS = 1 << 17


def per_query_rows(sel_curves, sel_index, ans_curves, ans_index, weight):
    """Per-query RDP curves ``selection + weight * answer`` (MATH.md section 7)."""
    rows = ans_curves[ans_index]
    rows *= weight[:, None]
    rows += sel_curves[sel_index]
    return rows


def accumulate(sel_curves, sel_index, ans_curves, ans_index, weight, carry, offset):
    """Per-query and cumulative epsilon for one chunk, in cache-sized slices.

    The cumulative curve after query i is ``cum_{i-1} + rdp_i`` added in file order, so it
    does not depend on where chunks or slices start.
    """
    count = weight.shape[0]
    eps_query = np.empty(count)
    eps_cum = np.empty(count)
    order_index = np.empty(count, dtype=np.intp)
    step = max(1, WORK_ELEMENTS // offset.size)
    carry = carry.copy()
    for lo in range(0, count, step):
        hi = min(count, lo + step)
        rows = per_query_rows(sel_curves, sel_index[lo:hi], ans_curves, ans_index[lo:hi],
                              weight[lo:hi])
        eps_query[lo:hi] = epsilon_of_rows(rows, offset)
        rows[0] += carry
        np.cumsum(rows, axis=0, out=rows)
        carry = rows[-1].copy()
        rows += offset
        best = np.argmin(rows, axis=1)
        order_index[lo:hi] = best
        eps_cum[lo:hi] = rows[np.arange(hi - lo), best]
    if np.any(offset < 0):  # the improved conversion is clipped at 0
        np.maximum(eps_cum, 0.0, out=eps_cum)
    return eps_query, eps_cum, order_index, carry


def epsilon_of_rows(curves, offset):
    eps = (curves + offset).min(axis=1)
    return np.maximum(eps, 0.0) if np.any(offset < 0) else eps


def budget_release(sel_curves, sel_index, ans_curves, ans_index, weight, carry, offset, limit):
    """Decide which replay answers a budget run releases (MATH.md section 7).

    A query the replay answered is released only if the cumulative epsilon after it,
    answer included, stays within ``limit``; otherwise it abstains (its selection is still
    charged). Alternates between two vectorised searches: from a released state, the
    first query whose answer would break the budget (assuming all before are released);
    from a refusal, the first query whose answer fits again (assuming all before are
    refused). Windows double while nothing changes, so the work is linear in the chunk
    plus a short window per change of state.
    """
    count = weight.shape[0]
    released = weight.copy()
    carry = carry.copy()
    first_refusal = None
    position, window, refusing = 0, 256, False
    while position < count:
        end = min(count, position + window)
        part = slice(position, end)
        wanted = weight[part] > 0
        if not refusing:
            rows = per_query_rows(sel_curves, sel_index[part], ans_curves, ans_index[part],
                                  weight[part])
            rows[0] += carry
            np.cumsum(rows, axis=0, out=rows)
            over = wanted & (epsilon_of_rows(rows, offset) > limit)
            if not over.any():
                carry, position, window = rows[-1].copy(), end, window * 2
                continue
            k = int(np.argmax(over))
            before = carry if k == 0 else rows[k - 1]
            carry = before + sel_curves[sel_index[position + k]]
            released[position + k] = 0.0
            if first_refusal is None:
                first_refusal = position + k
            position, window, refusing = position + k + 1, 256, True
        else:
            base = sel_curves[sel_index[part]].copy()
            base[0] += carry
            np.cumsum(base, axis=0, out=base)
            previous = np.vstack([carry[None, :], base[:-1]])
            answered_rows = per_query_rows(sel_curves, sel_index[part], ans_curves, ans_index[part],
                                  np.ones(end - position))
            fits = wanted & (epsilon_of_rows(previous + answered_rows, offset) <= limit)
            if not fits.any():
                released[part][wanted] = 0.0
                carry, position, window = base[-1].copy(), end, window * 2
                continue
            k = int(np.argmax(fits))
            refused = np.flatnonzero(wanted[:k]) + position
            released[refused] = 0.0
            carry = previous[k] + answered_rows[k]
            position, window, refusing = position + k + 1, 256, False
    return released, first_refusal


def chunk_total(sel_curves, sel_index, ans_curves, ans_index, weight, carry):
    """``carry`` plus the chunk's per-query curves, added in file order in the slices
    ``accumulate`` uses (so the sum equals its cumulative sum's last row bit for bit)."""
    count = weight.shape[0]
    step = max(1, WORK_ELEMENTS // carry.size)
    for lo in range(0, count, step):
        hi = min(count, lo + step)
        rows = per_query_rows(sel_curves, sel_index[lo:hi], ans_curves, ans_index[lo:hi],
                              weight[lo:hi])
        rows[0] += carry
        carry = np.add.reduce(rows, axis=0)
    return carry
