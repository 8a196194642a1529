package projects

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/cloudsim"
	"github.com/clouddb/clouddb_exporter/config"
)

func discoveryTemplate(url string, cred cloudsim.Credential) config.Project {
	return config.Project{
		API:         config.API{URL: url, Timeout: 5 * time.Second, RateLimit: 100, Burst: 10},
		Collect:     config.Collect{Interval: time.Minute, TransitionInterval: 10 * time.Second, MaxStaleness: 5 * time.Minute, Concurrency: 2},
		Credentials: config.Credentials{AccessKey: apiclient.Secret(cred.AccessKey), SecretKey: apiclient.Secret(cred.SecretKey)},
	}
}

func TestDiscoveryLoadsTheUsersProjects(t *testing.T) {
	user := cloudsim.Credential{AccessKey: "u-ak", SecretKey: "u-sk", Projects: []string{"pb", "pa"}}
	srv := httptest.NewServer(cloudsim.New(cloudsim.Options{Credentials: []cloudsim.Credential{user}}))
	t.Cleanup(srv.Close)
	d, err := NewDiscovery(discoveryTemplate(srv.URL+"/v1", user), "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := d.Load(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != "pa" || got[1].ID != "pb" || got[0].Name == "" || got[0].Credentials.AccessKey != "u-ak" {
		t.Errorf("discovered %+v", got)
	}
}

func TestDiscoveryOnTheFirstRevisionSaysWhy(t *testing.T) {
	cred := cloudsim.Credential{AccessKey: "ak", SecretKey: "sk", ProjectID: "p"}
	srv := httptest.NewServer(cloudsim.New(cloudsim.Options{Credentials: []cloudsim.Credential{cred}, Revision: cloudsim.Revision2024}))
	t.Cleanup(srv.Close)
	d, err := NewDiscovery(discoveryTemplate(srv.URL+"/v1", cred), "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Load(t.Context()); err == nil || !strings.Contains(err.Error(), "--api.project-id") {
		t.Errorf("err = %v, want one naming --api.project-id", err)
	}
}
