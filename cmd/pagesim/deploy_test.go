package main

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"
)

// The Kubernetes Indexed Job under deploy/ (kubectl is not here to dry-run
// it): it decodes into k8s.io/api's batch/v1 Job with unknown fields
// refused, it is an Indexed Job whose every index is one shard, its pods
// write where the volume is mounted, the sweep's command line passes
// pagesim's own checks for every index, and the memory it gives pagesim
// fits the pod's limit.
func TestTheKubernetesJobManifestIsAnIndexedJobOfShards(t *testing.T) {
	b, err := os.ReadFile("../../deploy/pagesim-sweep-job.yaml")
	require.NoError(t, err)
	var job batchv1.Job
	require.NoError(t, yaml.UnmarshalStrict(b, &job), "the batch/v1 Job schema")
	assert.Equal(t, "batch/v1", job.APIVersion)
	assert.Equal(t, "Job", job.Kind)
	assert.Regexp(t, `^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`, job.Name, "a DNS label")
	assert.LessOrEqual(t, len(job.Name), 63)
	spec := job.Spec
	require.NotNil(t, spec.CompletionMode)
	assert.Equal(t, batchv1.IndexedCompletion, *spec.CompletionMode)
	require.NotNil(t, spec.Completions)
	require.NotNil(t, spec.Parallelism)
	assert.LessOrEqual(t, *spec.Parallelism, *spec.Completions)
	if spec.BackoffLimitPerIndex != nil {
		assert.Equal(t, batchv1.IndexedCompletion, *spec.CompletionMode, "backoffLimitPerIndex needs Indexed")
	}
	pod := spec.Template.Spec
	assert.Contains(t, []corev1.RestartPolicy{corev1.RestartPolicyNever, corev1.RestartPolicyOnFailure}, pod.RestartPolicy, "a Job's pods")
	require.Len(t, pod.Containers, 1)
	c := pod.Containers[0]
	assert.NotEmpty(t, c.Image)
	require.Equal(t, []string{"/bin/sh", "-c"}, c.Command)
	require.Len(t, c.Args, 1)
	shell := c.Args[0]

	// The shard is the index: --shard "$JOB_COMPLETION_INDEX/N" with N
	// the completions.
	m := regexp.MustCompile(`--shard "\$JOB_COMPLETION_INDEX/(\d+)"`).FindStringSubmatch(shell)
	require.NotNil(t, m, shell)
	n, _ := strconv.Atoi(m[1])
	assert.Equal(t, int(*spec.Completions), n, "one completion per shard")

	// The output goes to the mounted volume, which is a claim.
	require.Len(t, c.VolumeMounts, 1)
	mount := c.VolumeMounts[0]
	assert.Contains(t, shell, `> "`+mount.MountPath+`/shard-$JOB_COMPLETION_INDEX.json.tmp"`)
	require.Len(t, pod.Volumes, 1)
	assert.Equal(t, mount.Name, pod.Volumes[0].Name)
	require.NotNil(t, pod.Volumes[0].PersistentVolumeClaim)

	// The sweep's command line, for every index, as pagesim parses it.
	cmdline := strings.TrimSpace(strings.Split(shell, ">")[0])
	fields := strings.Fields(cmdline)
	require.Equal(t, []string{"pagesim", "sweep"}, fields[:2])
	for i := range n {
		args := make([]string, 0, len(fields)-1)
		for _, f := range fields[2:] {
			args = append(args, strings.ReplaceAll(strings.Trim(f, `"`), "$JOB_COMPLETION_INDEX", strconv.Itoa(i)))
		}
		sw, code, err := parseSweep(args, false)
		require.NoError(t, err, "index %d: %s", i, strings.Join(args, " "))
		assert.Equal(t, exitOK, code)
		assert.Equal(t, i, sw.o.Shard)
		assert.Equal(t, n, sw.o.Shards)

		// pagesim's budget, and the collector's limit at 1.5 times
		// it, within the pod's memory limit.
		limit := c.Resources.Limits[corev1.ResourceMemory]
		require.False(t, limit.IsZero(), "a memory limit")
		assert.LessOrEqual(t, sw.limit+sw.limit/2, uint64(limit.Value()))
		cpu := c.Resources.Requests[corev1.ResourceCPU]
		assert.Equal(t, 0, cpu.Cmp(resource.MustParse("2")))
	}
}
