{ prometheusRules+:: { groups+: [] } }
