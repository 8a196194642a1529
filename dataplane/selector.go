package dataplane

import (
	"regexp"
	"strings"

	"github.com/clouddb/clouddb_exporter/fleet"
)

// serviceSelector applies a collector's --collect.*.environment and
// --collect.*.service-name-regex.
type serviceSelector struct {
	envs   map[string]bool
	nameRe *regexp.Regexp
}

func newServiceSelector(envs []string, nameRe *regexp.Regexp) serviceSelector {
	s := serviceSelector{nameRe: nameRe}
	if len(envs) > 0 {
		s.envs = map[string]bool{}
		for _, e := range envs {
			s.envs[strings.ToUpper(e)] = true
		}
	}
	return s
}

func (s serviceSelector) selected(snap *fleet.Snapshot) []string {
	if snap == nil {
		return nil
	}
	var ids []string
	for _, svc := range snap.Services {
		if s.selects(svc) {
			ids = append(ids, svc.ServiceID)
		}
	}
	return ids
}

func (s serviceSelector) selects(svc fleet.Service) bool {
	return (s.envs == nil || s.envs[strings.ToUpper(svc.Environment())]) && (s.nameRe == nil || s.nameRe.MatchString(svc.Name))
}
