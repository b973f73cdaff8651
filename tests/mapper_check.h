/*
 * mapper_check.h -- checks shared by the mapper tests (test_search.c,
 * test_mapper_cases.c): an independent reading of arch_constraints, so
 * that a mapping the mapper returns is checked against the constraints
 * as arch.h documents them, not as mapspace.c implements them.
 * Include after cmocka.h and mapping/mapping.h.
 */
#ifndef AS_TESTS_MAPPER_CHECK_H
#define AS_TESTS_MAPPER_CHECK_H

/* Children per instance of level l on X (y false) or Y. */
static int64_t fanout(const arch_spec *a, int l, bool y)
{
    int child = y ? (l ? a->level[l - 1].mesh_y : a->compute.mesh_y)
                  : (l ? a->level[l - 1].mesh_x : a->compute.mesh_x);
    return child / (y ? a->level[l].mesh_y : a->level[l].mesh_x);
}

/* Every constraint of every level holds in m. */
static void assert_honours(const arch_spec *a, const map_mapping *m)
{
    for (int l = 0; l < a->n_levels; l++) {
        const arch_constraints *c = &a->level[l].constraints;
        const map_level *ml = &m->level[l];
        int64_t used = 1;
        for (int d = 0; d < WL_NDIMS; d++) {
            if (c->temporal_factor[d])
                assert_int_equal(ml->temporal[d], c->temporal_factor[d]);
            if (c->temporal_max[d])
                assert_true(ml->temporal[d] <= c->temporal_max[d]);
            if (c->spatial_factor[d])
                assert_int_equal(ml->spatial[d], c->spatial_factor[d]);
            used *= ml->spatial[d];
        }
        for (int i = 0; i < c->n_temporal_order; i++)
            assert_int_equal(ml->temporal_order[i], c->temporal_order[i]);
        for (int i = 0; i < c->n_spatial_order; i++)
            assert_int_equal(ml->spatial_order[i], c->spatial_order[i]);
        if (c->spatial_split_fixed)
            assert_int_equal(ml->spatial_split, c->spatial_split);
        for (int ds = 0; ds < WL_NDATASPACES; ds++) {
            if (c->keep[ds] == ARCH_KEEP_ALWAYS)
                assert_true(ml->keep[ds]);
            if (c->keep[ds] == ARCH_KEEP_NEVER)
                assert_false(ml->keep[ds]);
        }
        int64_t children = fanout(a, l, false) * fanout(a, l, true);
        assert_true((double)used >= c->min_spatial_utilization * (double)children - 1e-9);
    }
}

#endif
