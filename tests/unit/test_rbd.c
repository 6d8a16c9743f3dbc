/* Unit tests of the rbd layer's pure parts (no cluster): feature names and bits both
 * ways, which names a user may set, and the dependencies librbd enforces between
 * features, with the sentence rbd.create raises. */
#include "check.h"
#include "rbd_target.h"

#include <errno.h>

static void test_feature_names(void)
{
    CHECK(cm_rbd_feature_bit("layering") == RBD_FEATURE_LAYERING);
    CHECK(cm_rbd_feature_bit("exclusive-lock") == RBD_FEATURE_EXCLUSIVE_LOCK);
    CHECK(cm_rbd_feature_bit("object-map") == RBD_FEATURE_OBJECT_MAP);
    CHECK(cm_rbd_feature_bit("fast-diff") == RBD_FEATURE_FAST_DIFF);
    CHECK(cm_rbd_feature_bit("deep-flatten") == RBD_FEATURE_DEEP_FLATTEN);
    CHECK(cm_rbd_feature_bit("journaling") == RBD_FEATURE_JOURNALING);
    /* librbd sets these itself; a user cannot ask for them */
    CHECK(cm_rbd_feature_bit("data-pool") == 0);
    CHECK(cm_rbd_feature_bit("striping") == 0);
    CHECK(cm_rbd_feature_bit("operations") == 0);
    CHECK(cm_rbd_feature_bit("Layering") == 0);
    CHECK(cm_rbd_feature_bit("") == 0);

    CHECK_STR(cm_rbd_feature_name(RBD_FEATURE_LAYERING), "layering");
    CHECK_STR(cm_rbd_feature_name(RBD_FEATURE_DATA_POOL), "data-pool");
    CHECK_STR(cm_rbd_feature_name(RBD_FEATURE_DIRTY_CACHE), "dirty-cache");
    CHECK(cm_rbd_feature_name(1ULL << 40) == NULL);
    CHECK_STR(cm_rbd_feature_choices(),
              "layering, exclusive-lock, object-map, fast-diff, deep-flatten or journaling");
}

static void test_feature_dependencies(void)
{
    char error[256] = "";
    CHECK(cm_rbd_features_check(RBD_FEATURES_DEFAULT, error, sizeof error) == 0);
    CHECK(cm_rbd_features_check(0, error, sizeof error) == 0);
    CHECK(cm_rbd_features_check(RBD_FEATURE_LAYERING, error, sizeof error) == 0);
    CHECK(cm_rbd_features_check(RBD_FEATURE_EXCLUSIVE_LOCK | RBD_FEATURE_JOURNALING, error,
                                sizeof error) == 0);

    CHECK(cm_rbd_features_check(RBD_FEATURE_OBJECT_MAP, error, sizeof error) == -EINVAL);
    CHECK_STR(error, "feature object-map needs exclusive-lock");
    CHECK(cm_rbd_features_check(RBD_FEATURE_EXCLUSIVE_LOCK | RBD_FEATURE_FAST_DIFF, error,
                                sizeof error) == -EINVAL);
    CHECK_STR(error, "feature fast-diff needs object-map");
    CHECK(cm_rbd_features_check(RBD_FEATURE_LAYERING | RBD_FEATURE_JOURNALING, error,
                                sizeof error) == -EINVAL);
    CHECK_STR(error, "feature journaling needs exclusive-lock");
}

int main(void)
{
    test_feature_names();
    test_feature_dependencies();
    return check_summary("rbd");
}
