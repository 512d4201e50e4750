-- Monthly revenue report per plan.
-- Run against the warehouse (PostgreSQL 15).

/* Parameters are bound by the scheduler:
   :month_start, :month_end */
WITH paid AS (
    SELECT
        i.account_id,
        i.plan,
        SUM(i.amount_cents) AS cents   -- gross, before refunds
    FROM invoices AS i
    WHERE i.paid_at >= :month_start
      AND i.paid_at <  :month_end
      AND i.status = 'paid'            -- 'void' and 'draft' excluded
    GROUP BY i.account_id, i.plan
),
refunds AS (
    SELECT r.account_id, SUM(r.amount_cents) AS cents
    FROM refunds AS r
    WHERE r.created_at BETWEEN :month_start AND :month_end
    GROUP BY r.account_id
)
SELECT
    p.plan,
    COUNT(DISTINCT p.account_id)                       AS accounts,
    SUM(p.cents - COALESCE(f.cents, 0)) / 100.0        AS net_revenue,
    'report -- v3 /* keep */'                          AS label,  -- string with comment markers
    E'tab\there'                                       AS escaped
FROM paid AS p
LEFT JOIN refunds AS f ON f.account_id = p.account_id
GROUP BY p.plan
ORDER BY net_revenue DESC; -- biggest first
