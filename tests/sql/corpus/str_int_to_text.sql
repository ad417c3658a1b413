SELECT CAST(n_nationkey AS VARCHAR) || n_name AS k FROM nation ORDER BY k
