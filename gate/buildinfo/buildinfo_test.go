package buildinfo

import (
	"runtime/debug"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestResolveVersion(t *testing.T) {
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	const rev = "0123456789abcdef0123456789abcdef01234567"
	tests := []struct {
		name        string
		stamped, sc string
		file        string
		info        *debug.BuildInfo
		want        Version
		wantString  string
	}{
		{
			name:    "release build stamped by ldflags",
			stamped: "v1.2.3", sc: rev, file: "v1.2.3\n",
			info:       &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}},
			want:       Version{Version: "v1.2.3", Commit: rev, Source: "release"},
			wantString: "v1.2.3",
		},
		{
			name:       "go install at a tag",
			file:       "v1.2.3\n",
			info:       &debug.BuildInfo{Main: debug.Module{Version: "v1.2.4"}},
			want:       Version{Version: "v1.2.4", Source: "module"},
			wantString: "v1.2.4",
		},
		{
			name:       "go install at a commit: a pseudo-version is a source build",
			file:       "v1.2.3\n",
			info:       &debug.BuildInfo{Main: debug.Module{Version: "v1.2.4-0.20260101120000-0123456789ab"}},
			want:       Version{Version: "v1.2.3", Source: "source"},
			wantString: "v1.2.3",
		},
		{
			name:       "go install at a commit after a pre-release",
			file:       "v1.2.3\n",
			info:       &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3-rc.1.0.20260101120000-0123456789ab"}},
			want:       Version{Version: "v1.2.3", Source: "source"},
			wantString: "v1.2.3",
		},
		{
			name:       "go install at a pre-release tag",
			file:       "v1.2.3\n",
			info:       &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3-rc.1"}},
			want:       Version{Version: "v1.2.3-rc.1", Source: "module"},
			wantString: "v1.2.3-rc.1",
		},
		{
			name:       "modified checkout",
			file:       "v0.1.0\n",
			info:       &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261130182845-0123456789ab+dirty"}, Settings: vcs(rev, "true")},
			want:       Version{Version: "v0.1.0+dirty", Commit: rev, Modified: true, Source: "source"},
			wantString: "v0.1.0+dirty (commit 0123456789ab)",
		},
		{
			name:       "clean checkout",
			file:       "v0.1.0\n",
			info:       &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs(rev, "false")},
			want:       Version{Version: "v0.1.0", Commit: rev, Source: "source"},
			wantString: "v0.1.0 (commit 0123456789ab)",
		},
		{
			name:       "no build information (the image, built without .git)",
			file:       "v0.1.0\n",
			want:       Version{Version: "v0.1.0", Source: "source"},
			wantString: "v0.1.0",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Resolve(tt.stamped, tt.sc, tt.file, tt.info)
			if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreFields(Version{}, "Schema", "Go", "OS", "Arch")); diff != "" {
				t.Errorf("Resolve (-want +got):\n%s", diff)
			}
			if got.String() != tt.wantString {
				t.Errorf("String() = %q, want %q", got.String(), tt.wantString)
			}
		})
	}
}
