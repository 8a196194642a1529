package apiclient

// Operations of revision 2026 of the API only.
const (
	OpListProjects  = "listProjects"
	OpStartService  = "startService"
	OpStopService   = "stopService"
	OpRenameService = "renameService"
)
