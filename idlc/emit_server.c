int idlc_dummy_emit_server(void); int idlc_dummy_emit_server(void){return 0;}
